"""The user cache of scenario files (evalkit.scenario.cache): what `list` and `validate` get from it is
what a cold load gives; a changed file, allow-list or evalkit is loaded again; a damaged cache is
ignored (issue 31)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ScenarioError
from evalkit.scenario.cache import ScenarioCache, Summary, scenario_summaries
from evalkit.scenario.model import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "scenarios").glob("*/*.yaml"))  # the hand-written families (no BFCL state mocks)


def _cold(paths: list[Path]) -> list[Summary]:
    return [Summary(s.id, s.family, s.description) for s in load_scenarios(paths)]


def test_a_warm_cache_gives_what_a_cold_load_gives(tmp_path: Path) -> None:
    first = scenario_summaries(SHIPPED, cache=ScenarioCache(folder=tmp_path))
    warm = ScenarioCache(folder=tmp_path)
    assert all(warm.get(p.read_bytes()) is not None for p in SHIPPED)  # every file was stored
    assert scenario_summaries(SHIPPED, cache=warm) == first == _cold(SHIPPED)


def test_a_changed_file_is_loaded_again(tmp_path: Path) -> None:
    scenario = tmp_path / "s" / "a.yaml"
    scenario.parent.mkdir()
    shutil.copy(SHIPPED[0], scenario)
    folder = tmp_path / "cache"
    before = scenario_summaries([scenario], cache=ScenarioCache(folder=folder))
    text = scenario.read_text(encoding="utf-8")
    scenario.write_text(text.replace(f"id: {before[0].id}", "id: renamed-here", 1), encoding="utf-8")
    assert scenario_summaries([scenario], cache=ScenarioCache(folder=folder))[0].id == "renamed-here"
    scenario.write_text(text.replace(f"id: {before[0].id}", "id: Not Valid", 1), encoding="utf-8")
    with pytest.raises(ScenarioError, match="id"):
        scenario_summaries([scenario], cache=ScenarioCache(folder=folder))


def test_another_allow_list_is_another_entry(tmp_path: Path) -> None:
    scenario_summaries(SHIPPED[:1], cache=ScenarioCache(folder=tmp_path))
    assert ScenarioCache(folder=tmp_path).get(SHIPPED[0].read_bytes()) is not None
    assert ScenarioCache(["mymocks"], folder=tmp_path).get(SHIPPED[0].read_bytes()) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda entries: "not json {",
        lambda entries: json.dumps([1, 2]),
        lambda entries: json.dumps({"stamp": "another evalkit", "entries": entries["entries"]}),
        lambda entries: json.dumps(entries | {"entries": {k: {"id": 3} for k in entries["entries"]}}),
        lambda entries: json.dumps(entries | {"entries": {k: "x" for k in entries["entries"]}}),
    ],
    ids=["not-json", "not-an-object", "another-stamp", "wrong-field-type", "entry-not-an-object"],
)
def test_a_damaged_cache_is_ignored(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    cache = ScenarioCache(folder=tmp_path)
    first = scenario_summaries(SHIPPED, cache=cache)
    file = tmp_path / cache.file.name  # type: ignore[union-attr]
    file.write_text(damage(json.loads(file.read_text(encoding="utf-8"))), encoding="utf-8")
    damaged = ScenarioCache(folder=tmp_path)
    assert damaged.get(SHIPPED[0].read_bytes()) is None
    assert scenario_summaries(SHIPPED, cache=damaged) == first  # loaded again, and stored whole
    assert ScenarioCache(folder=tmp_path).get(SHIPPED[0].read_bytes()) == first[0]


def test_a_cache_folder_that_cannot_be_written_costs_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    assert scenario_summaries(SHIPPED, cache=ScenarioCache(folder=blocker / "cache")) == _cold(SHIPPED)


def test_validate_rechecks_a_file_changed_after_it_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for path in SHIPPED[:3]:
        shutil.copy(path, folder / path.name)
    assert main(["validate", str(folder)]) == 0
    assert main(["validate", str(folder)]) == 0  # from the cache: the same verdict
    assert capsys.readouterr().out.splitlines() == ["3 of 3 files valid (3 scenarios)"] * 2
    changed = folder / SHIPPED[1].name
    changed.write_text(changed.read_text(encoding="utf-8") + "\nbogus: 1\n", encoding="utf-8")
    assert main(["validate", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"{changed}") and "bogus" in captured.err
    assert "2 of 3 files valid" in captured.out


def test_validate_finds_a_duplicate_id_among_cached_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    shutil.copy(SHIPPED[0], folder / "a.yaml")
    assert main(["validate", str(folder)]) == 0
    shutil.copy(SHIPPED[0], folder / "b.yaml")
    assert main(["validate", str(folder)]) == 1
    assert "duplicate scenario id" in capsys.readouterr().err
