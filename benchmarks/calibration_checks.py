"""The checks `benchmarks/gate_calibration.py` asserts: every test the gate can run keeps its size,
and `evalkit plan`'s runs reach 80% power for the test that will run, in every mode.

Sizes: for each test, runs per side, margin D and level, the test's rejection region (the gate's
own, from `evalkit.stats.gate_tests`) summed with scipy's binomial laws at every rate of the grid on
the null's boundary (p_base − p_cand = D; pairs with independent outcomes, so lost − gained = D),
and, in full mode, over the whole boundary of the pairs' nuisance rate as well. The floor test
(exact binomial) and the stratified test (exact conditional; two strata enumerated) beside them.

Plan: for each mode (unpaired or paired, with a margin or not, sequential), rate, drop and number of
cells m, `plan`'s runs per side at α/m (Holm's first step), then the power of the gate's test there,
computed again with scipy's laws over the region (sequential: the stopping rule's exact operating
characteristics, `evalkit.stats.stopping_rule`, which calls the gate's own decision function).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy import stats as sps

from evalkit.gate.plan import POWER, runs_for_drop, sequential_runs
from evalkit.stats.gate_tests import GateTest, select
from evalkit.stats.pvalues import floor_pvalue
from evalkit.stats.regions import PairStaircase, Staircase
from evalkit.stats.registry import UNPAIRED
from evalkit.stats.stopping_rule import cell_rule, operating_characteristics
from evalkit.stats.stratified import conditional_pvalue

__all__ = ["GRIDS", "Grid", "PlanRow", "SizeRow", "plan_rows", "size_rows"]

ALPHA = 0.05


@dataclass(frozen=True)
class Grid:
    runs: tuple[int, ...]
    rates: tuple[float, ...]
    margins: tuple[float, ...]
    cells: tuple[int, ...]  # m: the levels are α/m
    boundary: bool  # paired: also the worst over the whole boundary of the nuisance rate
    plan_rates: tuple[float, ...]
    plan_drops: tuple[float, ...]


GRIDS = {
    "quick": Grid(
        runs=(10, 25, 60, 150, 400),
        rates=(0.5, 0.8, 0.9, 0.95, 0.99),
        margins=(0.02, 0.05, 0.1, 0.2),
        cells=(1, 48),
        boundary=False,
        plan_rates=(0.8, 0.95, 1.0),
        plan_drops=(0.2,),
    ),
    "full": Grid(
        runs=(10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 400),
        rates=tuple(np.round(np.arange(0.5, 0.995, 0.01), 2)),
        margins=(0.02, 0.03, 0.05, 0.1, 0.15, 0.2),
        cells=(1, 6, 48, 187),
        boundary=True,
        plan_rates=(0.7, 0.8, 0.9, 0.95, 1.0),
        plan_drops=(0.1, 0.2, 0.3),
    ),
}


@dataclass(frozen=True)
class SizeRow:
    test: str
    runs: int
    margin: float
    level: float
    size: float  # the largest rejection rate found on the null's boundary
    at: float  # the baseline rate (or the nuisance rate, paired boundary) where it was found

    @property
    def holds(self) -> bool:
        return self.size <= self.level * (1 + 1e-9)


def _dense(region: Staircase) -> np.ndarray:
    return (np.arange(region.n_cand + 1)[None, :] <= region.limit[:, None]).astype(float)


def _paired_rate(region: PairStaircase, p_lost: float, p_gained: float) -> float:
    """P(reject) over the trinomial, as P(gained = c) P(lost ≥ need | c) with scipy's binomials."""
    n = region.n
    total = 0.0
    for c in range(n + 1):
        weight = sps.binom.pmf(c, n, p_gained)
        if weight < 1e-16:
            continue
        b = np.arange(n - c + 1)
        rejected = b >= region.need[b + c]
        q = p_lost / (1 - p_gained) if p_gained < 1 else 0.0
        total += weight * float(sps.binom.pmf(b, n - c, min(1.0, q))[rejected].sum())
    return total


def _unpaired_size(test: GateTest, n: int, margin: float, level: float, rates: tuple[float, ...]) -> SizeRow:
    region = test.region(n, n, margin, level)
    assert isinstance(region, Staircase)
    dense, ks = _dense(region), np.arange(n + 1)
    sizes = [
        (float(sps.binom.pmf(ks, n, p) @ dense @ sps.binom.pmf(ks, n, p - margin)), p) for p in rates if p >= margin
    ]
    size, at = max(sizes)
    return SizeRow(test.name, n, margin, level, size, at)


def _paired_size(test: GateTest, n: int, margin: float, level: float, grid: Grid) -> SizeRow:
    region = test.region(n, n, margin, level)
    assert isinstance(region, PairStaircase)
    found = [(_paired_rate(region, p * (1 - p + margin), (1 - p) * (p - margin)), p) for p in grid.rates if p >= margin]
    if grid.boundary:  # every nuisance rate: gained = t, lost = t + margin
        found += [(_paired_rate(region, t + margin, t), t) for t in np.linspace(0, (1 - margin) / 2, 41)]
    size, at = max(found)
    return SizeRow(test.name, n, margin, level, size, at)


def size_rows(grid: Grid) -> list[SizeRow]:
    """Every test the gate can run, at every size, margin and level of the grid."""
    rows = []
    levels = sorted({ALPHA / m for m in grid.cells}, reverse=True)
    for n, level in product(grid.runs, levels):
        for kind in UNPAIRED.names:  # every statistic users choose
            rows.append(_unpaired_size(select(False, 0.0, kind, n, n), n, 0.0, level, grid.rates))
        rows.append(_paired_size(select(True, 0.0, UNPAIRED.default, n, n), n, 0.0, level, grid))
        for margin in grid.margins:
            rows.append(_unpaired_size(select(False, margin, UNPAIRED.default, n, n), n, margin, level, grid.rates))
            rows.append(_paired_size(select(True, margin, UNPAIRED.default, n, n), n, margin, level, grid))
        rows.append(_floor_size(n, level, grid.rates))
    rows += [_stratified_size(rate, level) for rate, level in product((0.5, 0.8, 0.95, 0.99), levels)]
    return rows


def _floor_size(n: int, level: float, rates: tuple[float, ...]) -> SizeRow:
    """`--floor`: a cell whose true rate equals its floor fails at most `level` of the time."""
    found = []
    for floor in rates:
        rejected = np.array([floor_pvalue(x, n, floor) <= level for x in range(n + 1)])
        found.append((float(sps.binom.pmf(np.arange(n + 1), n, floor)[rejected].sum()), floor))
    size, at = max(found)
    return SizeRow("floor (exact binomial)", n, 0.0, level, size, at)


def _stratified_size(rate: float, level: float, n: int = 8) -> SizeRow:
    """The stratified test on two cells of n runs a side, every outcome enumerated."""
    pmf = sps.binom.pmf(np.arange(n + 1), n, rate)
    size = 0.0
    for b1, c1, b2, c2 in product(range(n + 1), repeat=4):
        weight = pmf[b1] * pmf[c1] * pmf[b2] * pmf[c2]
        if weight > 1e-14 and conditional_pvalue([(b1, n, c1, n), (b2, n, c2, n)]) <= level:
            size += weight
    return SizeRow("stratified (exact conditional, 2 cells)", n, 0.0, level, size, rate)


@dataclass(frozen=True)
class PlanRow:
    mode: str
    rate: float
    drop: float
    margin: float
    cells: int
    runs: int | None  # None: no drop that large, or beyond plan's limit (said so)
    power: float | None  # recomputed independently at `runs`
    why_not: str = ""

    @property
    def holds(self) -> bool:
        return self.runs is None or (self.power is not None and self.power >= POWER)


def _recomputed(paired: bool, margin: float, n: int, p: float, q: float, level: float) -> float:
    region = select(paired, margin, "boschloo", n, n).region(n, n, margin, level)
    if isinstance(region, PairStaircase):
        return _paired_rate(region, p * (1 - q), (1 - p) * q)
    ks = np.arange(n + 1)
    return float(sps.binom.pmf(ks, n, p) @ _dense(region) @ sps.binom.pmf(ks, n, q))


def plan_rows(grid: Grid) -> list[PlanRow]:
    rows = []
    modes = [
        ("unpaired", False, 0.0),
        ("paired", True, 0.0),
        ("unpaired, margin 5", False, 0.05),
        ("paired, margin 5", True, 0.05),
    ]
    for (mode, paired, margin), p, drop, m in product(modes, grid.plan_rates, grid.plan_drops, grid.cells):
        level = ALPHA / m
        planned = runs_for_drop(p, drop + margin, level, margin=margin, paired=paired)
        power = None if planned.runs is None else _recomputed(paired, margin, planned.runs, p, p - drop - margin, level)
        rows.append(PlanRow(mode, p, drop + margin, margin, m, planned.runs, power, planned.why_not))
    for p, drop, m in product(grid.plan_rates, grid.plan_drops, grid.cells):
        x, n, level = round(p * 25), 25, ALPHA / m
        planned, _ = sequential_runs(x, n, drop, level)
        power = None
        if planned.runs is not None:
            rule = cell_rule(x, n, planned.runs, level, looks=-(-planned.runs // 5) - 1)
            power = operating_characteristics(rule, x / n - drop, 5)[0]
        rows.append(PlanRow("sequential (baseline of 25)", x / n, drop, 0.0, m, planned.runs, power, planned.why_not))
    return rows
