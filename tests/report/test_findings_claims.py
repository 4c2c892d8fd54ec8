"""What the findings may claim (issue 31, item 3): a "best stack" only when it is better than
nothing, stacks too uncertain to compare apart from "not significantly worse", every stack with its
guards, published rows with intervals from their N, and no simulated latency drawn as data."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy import stats as sps

from evalkit.report import render
from evalkit.report.data import build_report
from evalkit.report.plots import render_plots
from evalkit.report.published import Published, PublishedRow, published_table
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results
from evalkit.stats.rates import Rate
from tests.report import records


def _results(runs: list[RunRecord], strategies: dict[str, object] | None = None, **fields: object) -> Results:
    results = records.results(runs, **fields)
    if strategies is not None:
        results.headers[0] = results.headers[0].model_copy(update={"config": {"strategies": strategies}})
    return results


def _unpaired(passes: int, n: int, strategy: str, offset: int = 0) -> list[RunRecord]:
    return [r.model_copy(update={"seed": r.seed + offset}) for r in records.cell_runs(passes, n, strategy=strategy)]


def test_one_correct_of_nineteen_is_no_best_stack() -> None:
    """The report once awarded "best stack" to `prompt · grammar 5% [1–25] 1/19`. Its Wilson interval's
    lower bound is above 0 (as it is for any x > 0), so the rule is a test: the best must be
    significantly better (one-sided Boschloo, α) than a stack with none correct at its own N."""
    runs = _unpaired(1, 19, "grammar") + _unpaired(0, 19, "trust_text", offset=100)
    (finding,) = build_report(_results(runs), include_power=False).findings
    reference = sps.boschloo_exact([[1, 0], [18, 19]], alternative="greater").pvalue
    assert finding.p_vs_none == pytest.approx(reference, rel=1e-6) and reference > 0.05
    assert finding.best.correct.low > 0  # why the interval rule could not decide it
    assert not finding.works
    assert "no stack works here" in finding.sentence and "best is" not in finding.sentence
    html = render(build_report(_results(runs), include_power=False), "html")
    assert "no stack works here" in html


def test_five_of_five_is_a_best_stack_against_nothing() -> None:
    runs = _unpaired(5, 5, "a")
    (finding,) = build_report(_results(runs), include_power=False).findings
    reference = sps.boschloo_exact([[5, 0], [0, 5]], alternative="greater").pvalue
    assert finding.p_vs_none == pytest.approx(reference, rel=1e-6) and reference <= 0.05
    assert finding.works and "best is native · a" in finding.sentence


def test_stacks_too_uncertain_to_compare_are_listed_apart() -> None:
    """A 0% stack once sat under "not significantly worse" beside a 100% best, with a small tag."""
    runs = records.cell_runs(5, 5, strategy="a")
    for strategy in ("b", "c", "d"):
        runs += records.cell_runs(0, 5, strategy=strategy)
    data = build_report(_results(runs), include_power=False)
    (finding,) = data.findings
    assert finding.works and [c.stack for c in finding.too_few] == ["native · b", "native · c", "native · d"]
    assert finding.not_worse == () and finding.worse == ()
    html = render(data, "html")
    cell = html.split('class="not-worse"', 1)[1].split("</td>", 1)[0]
    assert "native · b" not in cell
    assert "native · b" in html.split('class="too-few-cell"', 1)[1].split("</td>", 1)[0]


def test_every_stack_in_the_findings_shows_its_guards() -> None:
    strategies = {"grammar": ["respond_tool", "grammar"], "a": ["retry_nudge"]}
    runs = _unpaired(10, 10, "grammar") + _unpaired(9, 10, "a", offset=100)
    data = build_report(_results(runs, strategies), include_power=False)
    (finding,) = data.findings
    assert finding.best.guards == "respond_tool + grammar"
    assert [c.guards for c in finding.not_worse] == ["retry_nudge"]
    assert "native · grammar (respond_tool + grammar)" in finding.sentence
    html = render(data, "html")
    findings = html.split('id="findings-table"', 1)[1].split("</table>", 1)[0]
    assert "respond_tool + grammar" in findings and "retry_nudge" in findings


def _wilson(x: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_published_rows_carry_wilson_intervals_from_their_n() -> None:
    published = Published(
        source="a paper, N = 25",
        families=["fam"],
        n=25,
        rows=[
            PublishedRow(label="theirs", rates={"fam": 0.04}),
            PublishedRow(label="re-run", n=50, rates={"fam": 0.06}),
        ],
    )
    data = build_report(_results(records.cell_runs(3, 5, strategy="a")), include_power=False)
    table = published_table(published, data)
    first, second = (row.values[0] for row in table.rows if row.published)
    assert isinstance(first, Rate) and (first.x, first.n) == (1, 25)
    assert (first.low, first.high) == pytest.approx(_wilson(1, 25))
    assert isinstance(second, Rate) and (second.x, second.n) == (3, 50)
    assert (second.low, second.high) == pytest.approx(_wilson(3, 50))


def test_a_published_rate_that_is_no_count_of_its_n_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rows\.0\.rates\.fam: 0\.05 is not a count of N = 25"):
        Published(source="s", families=["fam"], n=25, rows=[PublishedRow(label="x", rates={"fam": 0.05})])


def test_simulated_latency_is_not_plotted(tmp_path: Path) -> None:
    simulated = build_report(_results(records.cell_runs(3, 5, simulated=True), simulated=True), include_power=False)
    assert "tradeoff" not in render_plots(simulated, fork=False)
    html = render(simulated, "html")
    assert 'id="plot-tradeoff"' not in html and 'id="latency-left-out"' in html
    measured = build_report(_results(records.cell_runs(3, 5)), include_power=False)
    assert "tradeoff" in render_plots(measured, fork=False)
