"""Issue 29's eight observations, each held as a regression test against the gate itself: the gate's
own verdicts (`compare` on results built from outcome counts), summed over every outcome table with
its exact probability, are the reference for each figure the gate or `plan` prints."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.cli import main
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.outcome import CellVerdict
from evalkit.gate.plan import plan_cells, round_runs
from evalkit.gate.render import render_text
from evalkit.results.records import RunRecord
from evalkit.stats.gate_tests import GateTest, select
from evalkit.stats.rates import rate
from evalkit.stats.regions import Staircase
from evalkit.stats.unconditional import rejection_region
from tests.report import records

CUT = 1e-7  # tables less likely than this are left out of a sum; their total mass is returned beside it


@cache
def _run(index: int, completed: bool, seed: int | None, scenario: str) -> RunRecord:
    return records.run(index=index, completed=completed, seed=seed, scenario=scenario)  # the gate never mutates one


def runs(outcomes: list[bool], *, seed: int | None = None, scenario: str = "s0") -> list[RunRecord]:
    return [_run(i, o, seed, scenario) for i, o in enumerate(outcomes)]


@cache
def unpaired_verdict(xb: int, nb: int, xc: int, nc: int, margin: float, alpha: float) -> CellVerdict:
    base = runs([i < xb for i in range(nb)])
    cand = runs([i < xc for i in range(nc)], seed=7)  # other seeds: nothing pairs
    config = GateConfig(margin=margin, alpha=alpha)
    (v,) = compare(records.results(base, runs_per_cell=nb), records.results(cand, runs_per_cell=nc), config).cells
    return v


def pair_outcomes(lost: int, gained: int, n: int) -> tuple[list[bool], list[bool]]:
    """n pairs: `lost` (baseline passed, candidate failed), `gained`, the rest passed on both sides."""
    base = [True] * lost + [False] * gained + [True] * (n - lost - gained)
    cand = [False] * lost + [True] * gained + [True] * (n - lost - gained)
    return base, cand


@cache
def paired_verdict(lost: int, gained: int, n: int, margin: float, alpha: float) -> CellVerdict:
    base, cand = pair_outcomes(lost, gained, n)
    config = GateConfig(margin=margin, alpha=alpha)
    result = compare(records.results(runs(base), runs_per_cell=n), records.results(runs(cand), runs_per_cell=n), config)
    (v,) = result.cells
    assert v.test.startswith(("Tango", "McNemar", "exact")), v.test  # the runs paired
    return v


def unpaired_rejection_rate(n: int, p_base: float, p_cand: float, margin: float, alpha: float) -> tuple[float, float]:
    """(P(the gate fails the cell) over the tables at least CUT likely, the mass of the others): the
    exact rate lies between the first and their sum."""
    fb, fc = sps.binom.pmf(np.arange(n + 1), n, p_base), sps.binom.pmf(np.arange(n + 1), n, p_cand)
    total = seen = 0.0
    for xb in np.nonzero(fb >= CUT**0.5)[0]:
        for xc in np.nonzero(fc >= CUT**0.5)[0]:
            seen += fb[xb] * fc[xc]
            if unpaired_verdict(int(xb), n, int(xc), n, margin, alpha).failed:
                total += fb[xb] * fc[xc]
    return total, 1 - seen


def paired_rejection_rate(n: int, p_base: float, p_cand: float, margin: float, alpha: float) -> tuple[float, float]:
    """As above for n pairs whose two outcomes are independent (lost/gained/tied: a trinomial)."""
    q_lost, q_gained = p_base * (1 - p_cand), (1 - p_base) * p_cand
    total = seen = 0.0
    for lost in range(n + 1):
        for gained in range(n + 1 - lost):
            prob = sps.multinomial.pmf([lost, gained, n - lost - gained], n, [q_lost, q_gained, 1 - q_lost - q_gained])
            if prob >= CUT:
                seen += prob
                total += prob * paired_verdict(lost, gained, n, margin, alpha).failed
    return total, 1 - seen


# 1 ------------------------------------------------------------------------------------------------


def test_plan_with_a_margin_plans_for_the_test_the_gate_runs_with_it() -> None:
    """Observation 1: `plan --margin` sized Boschloo's test; the margin test caught the drop 0.008 of
    the time at the planned runs. The gate with the margin must catch it with 80% there."""
    baseline = records.results([*records.cell_runs(50, 50)])
    (cell,) = plan_cells(baseline, 0.2, margin=0.1, pairing="unpaired")
    assert cell.planned.runs is not None
    assert unpaired_rejection_rate(cell.planned.runs, 1.0, 0.8, 0.1, 0.05)[0] >= 0.8


# 2 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "p_base", "margin", "alpha", "cells"),
    [(25, 0.95, 0.05, 0.05, 1), (50, 0.95, 0.1, 0.05 / 6, 6)],
)
def test_the_unpaired_margin_test_keeps_its_size(
    n: int, p_base: float, margin: float, alpha: float, cells: int
) -> None:
    """Observation 2: Farrington–Manning's score test failed a cell exactly D down 0.070 of the time
    at α = 0.05 (N 25, 0.95 → 0.90), and six such cells 0.072 of the time (N 50, 0.95 → 0.85, α/6)."""
    rejected, unseen = unpaired_rejection_rate(n, p_base, p_base - margin, margin, alpha)
    assert 1 - (1 - rejected - unseen) ** cells <= 0.05


def test_the_paired_margin_test_keeps_its_size() -> None:
    """Observation 2: Tango's score test failed six cells 20 points down (N 50, 0.95 → 0.75, D 0.2)
    0.084 of the time."""
    rejected, unseen = paired_rejection_rate(50, 0.95, 0.75, 0.2, 0.05 / 6)
    assert 1 - (1 - rejected - unseen) ** 6 <= 0.05


# 3 ------------------------------------------------------------------------------------------------


def test_the_stratified_flag_does_what_its_config_key_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Observation 3: `--stratified` exited 0 where `stratified: true` in --config exited 1."""
    base = [r for i in range(48) for r in records.cell_runs(24, 25, scenario=f"s{i}")]
    cand = [r for i in range(48) for r in records.cell_runs(22, 25, scenario=f"s{i}", seed=7)]
    b, c = records.write_results(tmp_path / "b.jsonl", base), records.write_results(tmp_path / "c.jsonl", cand)
    config = tmp_path / "gate.yaml"
    config.write_text("stratified: true\n", encoding="utf-8")
    by_key = main(["gate", "--baseline", str(b), "--candidate", str(c), "--config", str(config)])
    by_flag = main(["gate", "--baseline", str(b), "--candidate", str(c), "--stratified"])
    out = capsys.readouterr().out
    assert by_key == by_flag == 1 and out.count("stratified, all cells (48 cells)") == 2


# 4 ------------------------------------------------------------------------------------------------


def test_a_paired_cell_prints_a_paired_interval_that_agrees_with_its_verdict() -> None:
    """Observation 4: 90/100 → 80/100 paired (10 lost, 0 gained), margin 5: Tango failed the cell as
    "dropped by more than the margin", while the printed (unpaired) interval [−18, −2] held drops
    smaller than 5."""
    base, cand = pair_outcomes(10, 0, 100)
    base[10:20] = [False] * 10  # 90/100 → 80/100: ten more pairs fail on both sides
    cand[10:20] = [False] * 10
    result = compare(
        records.results(runs(base), runs_per_cell=100),
        records.results(runs(cand), runs_per_cell=100),
        GateConfig(margin=0.05),
    )
    (v,) = result.cells
    assert (v.baseline.x, v.candidate.x) == (90, 80)
    if v.failed:
        assert v.difference.high < -0.05, v.difference
    else:
        assert v.difference.high >= -0.05
    assert v.difference.high - v.difference.low < 0.12  # paired: 10 of 10 discordant pairs lost


# 5 ------------------------------------------------------------------------------------------------


def test_plan_plans_for_paired_runs_by_default() -> None:
    """Observation 5: `plan` sized Boschloo's unpaired test while the README recommends equal seeds
    (McNemar): at the planned 171 runs, 0.96 → 0.86 is caught by McNemar 0.77 of the time."""
    baseline = records.results(records.cell_runs(48, 50))
    (cell,) = plan_cells(baseline, 0.1)
    assert cell.planned.runs is not None
    assert paired_rejection_rate(cell.planned.runs, 0.96, 0.86, 0.0, 0.05)[0] >= 0.8


# 6 ------------------------------------------------------------------------------------------------

NEED = re.compile(
    r"margin: an unchanged cell at (\d+)% .* is shown within 5 points .* at ([\d,]+) (?:runs per side|pairs)"
)


def shown_within_rate(n: int, p: float, margin: float, alpha: float) -> float:
    """P(an unchanged cell at rate p is shown within the margin) with n runs a side: the tables the
    gate's own decision calls "within" (checked against `compare` on the tables at the region's
    edge), summed with scipy's binomial law."""
    test = select(False, margin, "boschloo", n, n)
    region = test.region(n, n, margin, alpha)  # the drop test's; the within test's is its mirror
    within = _within_tables(test, n, margin, alpha)
    edge = [
        (xb, xc) for xb in range(n - 3, n + 1) for xc in range(n + 1) if within[xb, xc] != within[xb, max(0, xc - 1)]
    ]
    for xb, xc in edge[:3]:
        for x in (xc - 1, xc):
            assert unpaired_verdict(xb, n, x, n, margin, alpha).within_margin == bool(within[xb, x])
    f = sps.binom.pmf(np.arange(n + 1), n, p)
    assert region is not None
    return float(f @ within @ f)


def _within_tables(test: GateTest, n: int, margin: float, alpha: float) -> np.ndarray:
    """[x_base, x_cand]: whether the within test rejects, from its region (a staircase over the
    candidate's passes first: the within test is "candidate − baseline > −margin")."""
    region = rejection_region(test.orders[1], n, n, -margin, alpha)
    assert isinstance(region, Staircase)
    x_cand, x_base = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    return (x_base <= region.limit[x_cand]).T


@pytest.mark.parametrize("seed", [7, None])
def test_the_margin_note_gives_the_runs_at_which_an_unchanged_cell_is_shown_within_with_80_percent(
    seed: int | None,
) -> None:
    """Observation 6: "shown within 5 points with about 201 runs per side", where at 201 runs an
    unchanged cell at 90% is shown within only 0.51 of the time."""
    base = [r for i in range(2) for r in records.cell_runs(45, 50, scenario=f"s{i}")]
    cand = [r for i in range(2) for r in records.cell_runs(45, 50, scenario=f"s{i}", seed=seed)]
    text = render_text(compare(records.results(base), records.results(cand), GateConfig(margin=0.05)))
    match = NEED.search(text)
    assert match, text
    p, n = int(match[1]) / 100, int(match[2].replace(",", ""))
    if seed is None:  # pairs: the paired test's own exact power, with independent outcomes
        test = select(True, 0.05, "boschloo", n, n)
        assert test.within_power(n, n, p, p, 0.05, 0.05) >= 0.8
        return
    assert shown_within_rate(n, p, 0.05, 0.05) >= 0.8
    # the least such number on the gate's grid of run counts (two significant digits)
    previous = round_runs(next(k for k in range(400) if round_runs(k) >= n) - 1)
    assert shown_within_rate(previous, p, 0.05, 0.05) < 0.8


# 7 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "printed"), [(29, "29%"), (57, "57%")])
def test_base_rates_are_rounded_not_truncated(x: int, printed: str) -> None:
    """Observation 7: `int(median * 100)` printed 0.29 as 28% and 0.57 as 56%."""
    base = [r for i in range(2) for r in records.cell_runs(x, 100, scenario=f"s{i}")]
    cand = [r for i in range(2) for r in records.cell_runs(x, 100, scenario=f"s{i}", seed=7)]
    text = render_text(compare(records.results(base, runs_per_cell=100), records.results(cand, runs_per_cell=100)))
    (line,) = [line for line in text.splitlines() if line.startswith("note: power:")]
    assert f"a drop from {printed} " in line, line
    assert rate(x, 100) is not None


# 8 ------------------------------------------------------------------------------------------------


def test_a_stratified_failure_names_its_test_in_the_headline() -> None:
    """Observation 8: a failure of the stratified test alone read "FAIL — 0 regressed, 48 passed"."""
    base = [r for i in range(48) for r in records.cell_runs(24, 25, scenario=f"s{i}")]
    cand = [r for i in range(48) for r in records.cell_runs(22, 25, scenario=f"s{i}", seed=7)]
    result = compare(records.results(base), records.results(cand), GateConfig(stratified=True))
    headline = render_text(result).splitlines()[0]
    assert result.exit_code == 1
    assert headline.startswith("evalkit gate: FAIL — stratified test: an 8-point drop across 48 cells ("), headline
    assert "0 regressed" not in headline.split("(")[0]
