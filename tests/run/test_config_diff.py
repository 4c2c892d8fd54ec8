"""A resume compares the stored config field by field: what changes runs is refused and named; a
field added since (at its default), concurrency and the output path are not changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.config_diff import changed_fields
from evalkit.run.runner import run_config
from tests.run.test_runner import config

ROOT = Path(__file__).resolve().parents[2]


def _rewrite_header(path: Path, edit) -> None:  # type: ignore[no-untyped-def]
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    edit(header)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")


def test_a_file_from_before_a_field_was_added_resumes(tmp_path):
    """A header written before `custom_families` existed, with another hash: the fields match."""
    out = run_config(config(runs=2), tmp_path / "r.jsonl")

    def older(header):  # type: ignore[no-untyped-def]
        del header["config"]["custom_families"]
        header["config_hash"] = "0123456789abcdef"

    _rewrite_header(out, older)
    run_config(config(runs=3), out, resume=True)
    assert len(load_results([out]).runs) == 8 * 2 * 3


def test_a_changed_field_is_refused_by_name(tmp_path):
    out = run_config(config(runs=2), tmp_path / "r.jsonl")
    changed = config(runs=2, seed=8, strategies={"trust_text": ["trust_text"], "nudge": [{"retry_nudge": {}}]})
    assert changed_fields(load_results([out]).headers[0].config, changed) == ["seed"]
    with pytest.raises(ResultsError, match=r"different config: seed changed"):
        run_config(changed, out, resume=True)
    other_stack = config(
        runs=2, strategies={"trust_text": ["trust_text"], "nudge": [{"retry_nudge": {"max_retries": 1}}]}
    )
    with pytest.raises(ResultsError, match=r"strategies\.nudge changed"):
        run_config(other_stack, out, resume=True)


def test_concurrency_and_backend_order_are_not_changes():
    stored = config().model_dump(mode="json")
    faster = config(backends=[{"label": "sim", "kind": "sim", "model": "small-local", "concurrency": 2}])
    assert changed_fields(stored, faster) == []
    two = [{"label": x, "kind": "sim", "model": "small-local"} for x in ("a", "b")]
    assert changed_fields(config(backends=two).model_dump(mode="json"), config(backends=two[::-1])) == []
    # an added entry only adds cells; a removed one is a change
    assert changed_fields(config(backends=two[:1]).model_dump(mode="json"), config(backends=two)) == []
    assert changed_fields(config(backends=two).model_dump(mode="json"), config(backends=two[:1])) == ["backends[b]"]


def test_a_resume_with_an_added_backend_runs_its_cells_and_leaves_the_others(tmp_path):
    """ADR-013's file grows Forge columns this way: the old runs stay as written, byte for byte, the
    new entry's cells are run, and they are what a fresh run of the grown config gives them."""
    one = [{"label": "sim", "kind": "sim", "model": "small-local"}]
    two = [*one, {"label": "sim-b", "kind": "sim", "model": "small-local", "strategies": ["trust_text"]}]
    out = run_config(config(runs=2, backends=one), tmp_path / "r.jsonl")
    before = out.read_text()
    run_config(config(runs=2, backends=two), out, resume=True)
    assert out.read_text().startswith(before.rsplit("\n", 2)[0])  # all but the footer kept
    grown = load_results([out]).runs
    fresh = load_results([run_config(config(runs=2, backends=two), tmp_path / "fresh.jsonl")]).runs
    key = lambda r: (r.run_id, r.correct, r.seed, r.model_calls)  # noqa: E731
    assert sorted(map(key, grown)) == sorted(map(key, fresh))
    assert {r.cell.strategy for r in grown if r.cell.backend == "sim-b"} == {"trust_text"}
    edited = [{**one[0], "model": "small-local-degraded"}, two[1]]
    with pytest.raises(ResultsError, match=r"backends\[sim\]\.model changed"):
        run_config(config(runs=2, backends=edited), out, resume=True)


def test_every_committed_results_file_matches_its_committed_config():
    for path in sorted((ROOT / "results").glob("*.jsonl")):
        header = load_results([path]).headers[0]
        current = load_config(ROOT / "configs" / f"{header.config_name}.yaml")
        assert changed_fields(header.config, current) == [], path.name


def test_the_committed_adr013_file_grows_with_resume_n(tmp_path):
    """The README's claim: `--resume -n 26` tops up the committed file (here on a copy)."""
    for folder in ("configs", "scenarios", "results"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    out = tmp_path / "results" / "adr013.jsonl"
    before = out.read_text()
    args = ["run", str(tmp_path / "configs" / "adr013.yaml"), "--resume", "--backend", "sim-small", "-n", "26"]
    assert main([*args, "-o", str(out)]) == 0
    after = out.read_text()
    assert after.startswith(before) and len(after.splitlines()) > len(before.splitlines())
