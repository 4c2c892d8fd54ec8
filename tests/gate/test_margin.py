"""`--margin D`: a cell regresses only on evidence of a drop larger than D; each passed cell is
either shown within the margin or has not enough evidence; `--require-evidence` makes the latter fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig, load_gate_config
from evalkit.gate.render import render_text
from evalkit.stats.proportions import newcombe
from evalkit.stats.unconditional import Table, exact_pvalue
from tests.report import records


def unpaired(x1: int, n1: int, x2: int, n2: int, **config: object) -> object:
    base = records.results(records.cell_runs(x1, n1), runs_per_cell=n1)
    cand = records.results(records.cell_runs(x2, n2, seed=7), runs_per_cell=n2)
    return compare(base, cand, GateConfig(level="cell", **config))  # type: ignore[arg-type]


def test_a_drop_under_the_margin_is_not_a_regression() -> None:
    """400/400 → 384/400 fails without a margin; with 5 points it is not shown to exceed the margin."""
    assert unpaired(400, 400, 384, 400).failed  # type: ignore[attr-defined]
    result = unpaired(400, 400, 384, 400, margin=0.05)
    (v,) = result.cells  # type: ignore[attr-defined]
    assert not v.failed and v.test == "Chan's exact test (Farrington–Manning score), margin 5 pts"
    assert v.p == pytest.approx(exact_pvalue("fm", Table(400, 400, 384, 400), 0.05), rel=1e-12)
    # a 4-point drop is not shown to be under 5 points either: the interval reaches below −5
    assert not v.within_margin and v.difference.low < -0.05
    assert v.difference.low <= newcombe(384, 400, 400, 400, 0.9).low + 0.01  # near the score interval
    assert render_text(result).startswith(  # type: ignore[arg-type]
        "evalkit gate: PASS — 0 regressed, 0 shown within 5 points, 1 not enough evidence (at their rates, an "
        "unchanged cell is shown within 5 points with 80% probability at "
    )
    close = unpaired(400, 400, 398, 400, margin=0.05)
    assert close.cells[0].within_margin  # type: ignore[attr-defined]
    assert render_text(close).startswith("evalkit gate: PASS — 0 regressed, 1 shown within 5 points (")  # type: ignore[arg-type]


def test_a_drop_beyond_the_margin_regresses() -> None:
    result = unpaired(100, 100, 70, 100, margin=0.05)
    (v,) = result.cells  # type: ignore[attr-defined]
    assert v.failed and "by more than the margin of 5 pts" in v.reasons[0]


def test_paired_cells_use_tango() -> None:
    base = records.results(records.cell_runs(50, 50), runs_per_cell=50)
    cand = records.results(records.cell_runs(40, 50), runs_per_cell=50)
    (v,) = compare(base, cand, GateConfig(level="cell", margin=0.05)).cells
    assert v.test == "exact test (Tango's score), paired, margin 5 pts (10 lost, 0 gained)"
    assert v.p == pytest.approx(exact_pvalue("tango", Table(10, 50, 0, 50), 0.05), rel=1e-12) and v.failed


def test_margin_zero_is_todays_test() -> None:
    (v,) = unpaired(25, 25, 20, 25, margin=0.0).cells  # type: ignore[attr-defined]
    assert v.test == "Boschloo exact" and v.failed


def test_not_enough_evidence_is_said_and_require_evidence_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = unpaired(25, 25, 25, 25, margin=0.05)
    (v,) = result.cells  # type: ignore[attr-defined]
    assert not v.within_margin and v.need_runs is not None and v.need_runs > 25
    line = render_text(result).splitlines()[0]  # type: ignore[arg-type]
    assert line.startswith(
        "evalkit gate: PASS — 0 regressed, 0 shown within 5 points, 1 not enough evidence (at their rates, an "
        "unchanged cell is shown within 5 points with 80% probability at "
    )
    assert result.exit_code == 0  # type: ignore[attr-defined]
    strict = unpaired(25, 25, 25, 25, margin=0.05, require_evidence=True)
    assert strict.exit_code == 4  # type: ignore[attr-defined]
    base = records.write_results(tmp_path / "b.jsonl", records.cell_runs(25, 25))
    cand = records.write_results(tmp_path / "c.jsonl", records.cell_runs(25, 25, seed=7))
    code = main(["gate", "--baseline", str(base), "--candidate", str(cand), "--margin", "0.05", "--require-evidence"])
    assert code == 4 and "not enough evidence" in capsys.readouterr().out


def test_margin_in_a_gate_config(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("margin: 0.05\nrequire_evidence: true\n", encoding="utf-8")
    config = load_gate_config(path)
    assert config.margin == 0.05 and config.require_evidence


def test_one_run_count_per_question_in_every_output_from_plans_function() -> None:
    """Issue 31: one gate output gave three counts ("need about 510 more runs each", "with about 294
    runs per side", "about 52 runs per side"). Now each cell's count is `plan`'s runs_to_show_within
    at its baseline rate, the same in the terminal, the markdown and the JUnit; the headline gives the
    largest, the margin note the one at the median rate."""
    import re
    from xml.etree import ElementTree as ET

    from evalkit.gate.plan import runs_to_show_within
    from evalkit.gate.render import render_junit, render_markdown

    base = [*records.cell_runs(45, 50, scenario="a"), *records.cell_runs(40, 50, scenario="b")]
    cand = [*records.cell_runs(45, 50, scenario="a", seed=7), *records.cell_runs(40, 50, scenario="b", seed=7)]
    result = compare(records.results(base), records.results(cand), GateConfig(margin=0.1))
    expected = {v.name: runs_to_show_within(v.baseline.value, 0.1, 0.05, paired=False).runs for v in result.cells}
    assert all(v.need_runs == expected[v.name] for v in result.cells) and len(set(expected.values())) == 2
    count = re.compile(r"with 80% probability at ([\d,]+) runs per side")
    text, markdown = render_text(result), render_markdown(result)
    assert [int(n.replace(",", "")) for n in count.findall(text.splitlines()[0])] == [max(expected.values())]
    for name, runs in expected.items():
        row = next(line for line in markdown.splitlines() if line.startswith(f"| {name} |"))
        assert count.findall(row) == [f"{runs:,}"]
    suite = ET.fromstring(render_junit(result)).find("testsuite")
    assert suite is not None
    for case in suite.iter("testcase"):
        out = case.find("system-out")
        assert out is not None and count.findall(out.text or "") == [f"{expected[case.get('name', '')]:,}"]
    note = next(n for n in result.notes if n.startswith("margin:"))
    median = runs_to_show_within(0.85, 0.1, 0.05, paired=False).runs
    assert count.findall(note) == [f"{median:,}"]
