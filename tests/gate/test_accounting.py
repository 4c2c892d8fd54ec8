"""Every cell is accounted for: each baseline cell (and, with --sequential, each candidate-config
cell) ends as regressed, passed or not judged, and a cell not judged makes the exit non-zero (4)."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from evalkit.cli import main
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.render import render_junit, render_markdown, render_text
from evalkit.results.records import RunRecord
from tests.gate.test_cli import sequential_config
from tests.report import records

NOT_JUDGED = 4


def gate(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["gate", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scenarios(count: int, n: int = 25, **fields: object) -> list[RunRecord]:
    return [r for i in range(count) for r in records.cell_runs(n, n, scenario=f"s{i}", **fields)]


def with_infra(scenario: str, infra: int, n: int = 25) -> list[RunRecord]:
    """A cell of n runs whose last `infra` runs are infra errors and the others pass."""
    return [
        records.run(
            scenario=scenario,
            index=i,
            outcome="infra_error" if i >= n - infra else None,
            completed=i < n - infra,
        )
        for i in range(n)
    ]


def test_a_baseline_cell_missing_in_the_candidate_is_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = records.write_results(tmp_path / "base.jsonl", scenarios(2))
    cand = records.write_results(tmp_path / "cand.jsonl", scenarios(1))
    md, junit = tmp_path / "s.md", tmp_path / "g.xml"
    code, out, _ = gate(capsys, "--baseline", base, "--candidate", cand, "--markdown", md, "--junit", junit)
    assert code == NOT_JUDGED
    assert "not judged: sim/native/trust_text/s1: missing in the candidate" in out
    assert "sim/native/trust_text/s1" in md.read_text(encoding="utf-8")
    case = ET.parse(junit).getroot().find("testsuite/testcase[@name='sim/native/trust_text/s1']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "not judged"
    assert "missing in the candidate" in (failure.get("message") or "")
    code, out, _ = gate(capsys, "--baseline", base, "--candidate", cand, "--allow-unjudged")
    assert code == 0 and "not judged: sim/native/trust_text/s1" in out


def test_a_cell_whose_runs_are_all_infra_errors_is_not_judged() -> None:
    base = scenarios(10)
    cand = scenarios(9) + with_infra("s9", 25)  # the column: 25 of 250 = 10%, at the limit
    result = compare(records.results(base), records.results(cand), GateConfig())
    assert not result.passed and not result.failed
    assert [name for name, _ in result.unjudged] == ["sim/native/trust_text/s9"]
    reason = dict(result.unjudged)["sim/native/trust_text/s9"]
    assert "25 of 25 candidate runs are infra errors" in reason
    for text in (render_text(result), render_markdown(result), render_junit(result)):
        assert "sim/native/trust_text/s9" in text and "infra errors" in text


def test_the_infra_limit_holds_in_each_cell() -> None:
    base = scenarios(10)
    cand = scenarios(9) + with_infra("s9", 15)  # 60% in the cell, 6% in the column
    result = compare(records.results(base), records.results(cand), GateConfig())
    assert [name for name, _ in result.unjudged] == ["sim/native/trust_text/s9"]
    assert "15 of 25 candidate runs are infra errors" in dict(result.unjudged)["sim/native/trust_text/s9"]
    assert len(result.cells) == 9
    base_side = compare(records.results(cand), records.results(base), GateConfig())
    assert "baseline runs are infra errors" in dict(base_side.unjudged)["sim/native/trust_text/s9"]
    # pooled over the column, the cell is the column: 6% there, judged on like-with-like runs
    pooled = compare(records.results(base), records.results(cand), GateConfig(level="cell"))
    assert not pooled.unjudged and pooled.passed


def _without_footer(path: Path) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")
    return path


def test_a_partial_candidate_without_a_footer_is_not_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = records.write_results(tmp_path / "base.jsonl", scenarios(10))
    short = records.cell_runs(0, 2, scenario="s9")
    cand = _without_footer(records.write_results(tmp_path / "cand.jsonl", scenarios(9) + short))
    code, out, _ = gate(capsys, "--baseline", base, "--candidate", cand)
    assert code == NOT_JUDGED
    assert "not judged: sim/native/trust_text/s9: 2 of 25 candidate runs" in out
    assert "no footer" in out


@pytest.mark.filterwarnings("ignore:.*skipping a record cut short")
def test_a_candidate_cut_mid_line_is_not_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = records.write_results(tmp_path / "base.jsonl", scenarios(3))
    cand = _without_footer(records.write_results(tmp_path / "cand.jsonl", scenarios(3)))
    text = cand.read_text(encoding="utf-8")
    cand.write_text(text[: len(text) - 40], encoding="utf-8")  # the last record cut mid-line
    code, out, _ = gate(capsys, "--baseline", base, "--candidate", cand)
    assert code == NOT_JUDGED and "not judged: sim/native/trust_text/s2" in out


def test_a_complete_candidate_with_fewer_runs_per_cell_is_judged(tmp_path: Path) -> None:
    """A smaller design is not a partial run: the candidate's own header says how many runs it meant."""
    base = records.results(scenarios(2))
    cand = records.results(scenarios(2, n=10), runs_per_cell=10)
    result = compare(base, cand, GateConfig())
    assert result.passed and not result.unjudged and len(result.cells) == 2


def test_sequential_names_baseline_cells_the_candidate_does_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Baseline with two scenarios, a candidate config running one of them (and one the baseline
    lacks): not a PASS. The baseline is weak, so the one cell judged passes."""
    folder = tmp_path / "cfg"
    folder.mkdir()
    config = sequential_config(folder, "strong", runs=1)
    base_runs = [
        records.run(scenario=s, family="f", strategy="retry_nudge", index=i, model="strong", completed=i < 12)
        for s in ("greet-hi", "greet-thanks")
        for i in range(25)
    ]
    base = records.write_results(tmp_path / "base.jsonl", base_runs)
    code, out, _ = gate(capsys, "--sequential", "--baseline", base, "--candidate", config, "--out", tmp_path / "b")
    assert code == NOT_JUDGED, out
    assert "not judged: sim/native/retry_nudge/greet-thanks: not in the candidate config" in out
    assert "not judged: sim/native/retry_nudge/rel-capital-city: not in the baseline" in out
    assert "pass sim/native/retry_nudge/greet-hi" in out
    # the sequential verdict states its power too
    assert "note: power: 1 cell(s) with a baseline of 12/25 (boschloo, α/m = 0.05): a drop to " in out


def test_a_gate_between_two_configs_warns_and_names_the_cells_they_do_not_share() -> None:
    """Issue 31: default against adr013 said only "228 cells not judged", no word that the configs differ."""
    base = records.results(records.cell_runs(25, 25, strategy="a") + records.cell_runs(25, 25, strategy="b"))
    cand = records.results(records.cell_runs(25, 25, strategy="a") + records.cell_runs(25, 25, strategy="c"))
    base.headers[0] = base.headers[0].model_copy(
        update={"config_name": "default", "config_hash": "aaaa", "config": {"strategies": {"a": ["x"], "b": ["y"]}}}
    )
    cand.headers[0] = cand.headers[0].model_copy(
        update={"config_name": "other", "config_hash": "bbbb", "config": {"strategies": {"a": ["x"], "c": ["z"]}}}
    )
    result = compare(base, cand)
    (warning,) = [w for w in result.warnings if "different configs" in w]
    assert warning == (
        "the baseline and the candidate come from different configs (default and other; they differ in "
        "strategies.b, strategies.c); cells not shared: 1 only in the baseline (sim/native/b/s1); "
        "1 only in the candidate (sim/native/c/s1)"
    )
    assert f"warning: {warning}" in render_text(result)
    same = compare(records.results(records.cell_runs(25, 25)), records.results(records.cell_runs(25, 25)))
    assert not any("different configs" in w for w in same.warnings)


def test_one_infra_error_is_said_in_the_singular() -> None:
    """Issue 31: "1 infra errors" read wrong; a cell of one run that is an infra error says it once."""
    base = scenarios(10)
    cand = scenarios(9) + with_infra("s9", 1, n=1)
    result = compare(records.results(base), records.results(cand), GateConfig())
    reason = dict(result.unjudged)["sim/native/trust_text/s9"]
    assert "1 of 1 candidate run is an infra error" in reason, reason
    assert "1 infra errors" not in render_text(result) + render_markdown(result)
