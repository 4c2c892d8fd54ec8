"""The gate's tests, in one registry: for each, its name, its p-value, the interval it prints, the
region it rejects and so its exact power. The gate picks one per cell (`select`) from whether the
runs pair, the margin, the `test` setting and the cell's size; `evalkit plan` picks the same one for
the runs it plans, so a plan is for the test that will run. The tests users choose for unpaired
cells (`test`: Boschloo's and Fisher's here) are registered by name in `evalkit.stats.registry`.

Up to CAP runs a side (or pairs) everything is exact: the tests are exact (`evalkit.stats.
unconditional`, or conditional: Fisher, McNemar) and the interval inverts the test itself, so a cell
that fails always prints an interval beyond the margin, and "shown within the margin" is the same
test in the other direction. Above CAP a cell fails only when both its exact test and its score
test reject (the p-value is the larger of the two: a sub-region of the exact test's, so its size
stays at most α), and the interval is the score interval that inverts the score test. The ordering
of an interval's other end (the side no decision reads at a margin of 0) is the score statistic's:
Fisher's and McNemar's orderings do not rank evidence of a rise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from evalkit.stats.exact import boschloo_pvalues, fisher_grid
from evalkit.stats.proportions import Difference
from evalkit.stats.pvalues import fisher, mcnemar, mcnemar_critical
from evalkit.stats.regions import PairStaircase, Staircase
from evalkit.stats.registry import UNPAIRED, Statistics
from evalkit.stats.score import fm_pvalue, score_interval, tango_pvalue
from evalkit.stats.unconditional import (
    Order,
    Region,
    Table,
    exact_interval,
    exact_pvalue,
    ordering_region,
    rejection_region,
)

__all__ = [
    "BOSCHLOO",
    "CAP",
    "FISHER",
    "REGISTRY",
    "BoschlooTest",
    "Counts",
    "FisherTest",
    "GateKind",
    "GateTest",
    "by_kind",
    "detectable_drop",
    "select",
]

CAP = 1000  # runs a side (pairs) up to which the test, its interval and its power are exact
GateKind = str  # a test's name: one of REGISTRY's, or a statistic's of `evalkit.stats.registry`


@dataclass(frozen=True)
class Counts:
    """What a cell's test reads: passes of each side, and for paired runs the discordant pairs."""

    base_x: int
    base_n: int
    cand_x: int
    cand_n: int
    lost: int = 0  # pairs the baseline passed and the candidate failed
    gained: int = 0
    paired: bool = False

    def table(self) -> Table:
        if self.paired:
            return Table(self.lost, self.base_n, self.gained, self.base_n)
        return Table(self.base_x, self.base_n, self.cand_x, self.cand_n)


@dataclass(frozen=True)
class GateTest:
    """A test the gate runs. The ones users choose for unpaired cells (`evalkit.stats.registry`)
    also give every table's p-value at once (`grid`), which `gate --sequential` reads."""

    kind: GateKind
    name: str  # as the power notes name it
    label: str  # as a verdict names it (then the margin, and the discordant pairs)
    paired: bool
    orders: tuple[Order, Order]  # the interval's orderings: its drop side, its rise side
    large: bool = False  # above CAP: the exact test and the score test together

    def describe(self, counts: Counts, margin: float) -> str:
        beyond = f", margin {round(margin * 100, 2):g} pts" if margin > 0 else ""
        pairs = f" ({counts.lost} lost, {counts.gained} gained)" if self.paired else ""
        return self.label + beyond + pairs

    def pvalue(self, counts: Counts, margin: float) -> float:
        """One-sided p of "the candidate dropped by more than the margin"."""
        table = counts.table()
        if self.kind in ("mcnemar", "mcnemar+score"):
            exact = mcnemar(counts.lost, counts.gained)
        else:
            exact = exact_pvalue(self.orders[0], table, margin)
        return max(exact, self._score(table, margin)) if self.large else exact

    def within_pvalue(self, counts: Counts, margin: float) -> float:
        """One-sided p of "the candidate dropped by less than the margin" (shown within it)."""
        table = counts.table().swapped()
        exact = exact_pvalue(self.orders[1], table, -margin)
        return max(exact, self._score(table, -margin)) if self.large else exact

    def grid(self, n_base: int, n_cand: int) -> np.ndarray:
        """The one-sided p-value at a margin of 0 of every table (x_base, x_cand)."""
        raise NotImplementedError(f"{self.name} gives no p-value grid: it is not a test users choose")

    def exact_region(self, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
        """The outcomes the exact test rejects at α (above CAP, `region` narrows them by the score test's)."""
        if self.kind in ("mcnemar", "mcnemar+score"):
            return PairStaircase(n_base, np.concatenate(([1], mcnemar_critical(n_base, alpha))))
        return rejection_region(self.orders[0], n_base, n_cand, margin, alpha)

    def _score(self, table: Table, margin: float) -> float:
        if self.paired:
            return tango_pvalue(table.x1, table.x2, table.n1, margin)
        return fm_pvalue(table.x1, table.n1, table.x2, table.n2, margin)

    def interval(self, counts: Counts, margin: float, alpha: float) -> Difference:
        """The 1 − 2α interval of candidate − baseline (see the module's docstring)."""
        table = counts.table()
        estimate = counts.cand_x / counts.cand_n - counts.base_x / counts.base_n
        score = score_interval(self.paired, table.x1, table.n1, table.x2, table.n2, alpha)
        if self.large:
            low, high = score
            low = _anchored(low, margin, self.pvalue(counts, margin) <= alpha, below=True)
            if margin > 0:
                high = _anchored(high, margin, self.within_pvalue(counts, margin) <= alpha, below=False)
        else:
            low, high = exact_interval(self.orders, table, alpha, (margin,), score)
        return Difference(estimate, -high, -low)

    def region(self, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
        """The outcomes this test rejects at α (paired: n_base pairs)."""
        return _region(self, n_base, n_cand, margin, alpha)

    def power(self, n_base: int, n_cand: int, p_base: float, p_cand: float, margin: float, alpha: float) -> float:
        """P(reject at α) at these true rates; pairs with independent outcomes (the conservative
        case for runs whose outcomes agree more often than chance)."""
        region = self.region(n_base, n_cand, margin, alpha)
        if isinstance(region, PairStaircase):
            return float(region.probability(p_base * (1 - p_cand), (1 - p_base) * p_cand)[0])
        return float(region.probability(p_base, p_cand)[0])

    def within_power(
        self, n_base: int, n_cand: int, p_base: float, p_cand: float, margin: float, alpha: float
    ) -> float:
        """P(shown within the margin) at these true rates."""
        region = _within_region(self, n_base, n_cand, margin, alpha)
        # the within test runs on the swapped sides, so lost and gained swap too
        if isinstance(region, PairStaircase):
            return float(region.probability((1 - p_base) * p_cand, p_base * (1 - p_cand))[0])
        return float(region.probability(p_cand, p_base)[0])


def _anchored(delta: float, margin: float, rejected: bool, *, below: bool) -> float:
    """A score interval's end, moved onto the margin if it disagreed with the test's decision there
    (it cannot when the decision is the larger p of the exact and the score test: kept as a guard)."""
    if below:
        return max(delta, margin) if rejected else min(delta, margin - 1e-12)
    return min(delta, margin) if rejected else max(delta, margin + 1e-12)


def _score_region(test: GateTest, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
    order: Order = "tango" if test.paired else "fm"
    return ordering_region(order, n_base, n_cand, margin, -float(special.ndtri(alpha)))


@lru_cache(maxsize=256)
def _region(test: GateTest, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
    exact = test.exact_region(n_base, n_cand, margin, alpha)
    return exact.intersect(_score_region(test, n_base, n_cand, margin, alpha)) if test.large else exact  # type: ignore[arg-type]


@lru_cache(maxsize=256)
def _within_region(test: GateTest, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
    exact = rejection_region(test.orders[1], n_cand, n_base, -margin, alpha)
    if not test.large:
        return exact
    order: Order = "tango" if test.paired else "fm"
    return exact.intersect(ordering_region(order, n_cand, n_base, -margin, -float(special.ndtri(alpha))))  # type: ignore[arg-type]


@dataclass(frozen=True)
class BoschlooTest(GateTest):
    """Boschloo's exact unconditional test: tables ordered by Fisher's p (`evalkit.stats.exact`)."""

    def grid(self, n_base: int, n_cand: int) -> np.ndarray:
        return boschloo_pvalues(n_base, n_cand)


@dataclass(frozen=True)
class FisherTest(GateTest):
    """Fisher's exact test, conditional on the passes of both sides together."""

    def pvalue(self, counts: Counts, margin: float) -> float:
        return fisher(counts.base_x, counts.base_n, counts.cand_x, counts.cand_n)

    def grid(self, n_base: int, n_cand: int) -> np.ndarray:
        return fisher_grid(n_base, n_cand)

    def exact_region(self, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
        # a p-value equal to α up to rounding rejects, as `fisher` decides a table at α
        limit = (fisher_grid(n_base, n_cand) <= alpha * (1 + 1e-9)).sum(axis=1) - 1
        return Staircase(n_base, n_cand, np.maximum.accumulate(limit))


def _chosen(statistics: Statistics, name: str) -> GateTest:
    """The test a statistic's registry entry names, checked to be one the gate can run."""
    test = statistics.test(name)
    if not isinstance(test, GateTest):
        raise TypeError(f"the statistic {name!r} is a {type(test).__name__}, not a GateTest")
    return test


# the statistics users choose (`evalkit.stats.registry.UNPAIRED` names them)
BOSCHLOO = BoschlooTest("boschloo", "Boschloo", "Boschloo exact", False, ("fisher", "fm"))
FISHER = FisherTest("fisher", "Fisher", "Fisher exact", False, ("fisher", "fm"))

# every test by kind: the statistics users choose, and those the gate picks itself from whether runs
# pair, the margin and the cell's size
REGISTRY: dict[GateKind, GateTest] = {name: _chosen(UNPAIRED, name) for name in UNPAIRED.names} | {
    t.kind: t
    for t in (
        GateTest("mcnemar", "McNemar on pairs", "McNemar exact, paired", True, ("mcnemar", "tango")),
        GateTest(
            "chan",
            "Chan's exact test",
            "Chan's exact test (Farrington–Manning score)",
            False,
            ("fm", "fm"),
        ),
        GateTest(
            "tango",
            "exact Tango test on pairs",
            "exact test (Tango's score), paired",
            True,
            ("tango", "tango"),
        ),
        GateTest(
            "chan+score",
            "exact and score test (above 1,000 runs a side)",
            "exact and score test (Farrington–Manning score, above 1,000 runs a side)",
            False,
            ("fm", "fm"),
            large=True,
        ),
        GateTest(
            "mcnemar+score",
            "McNemar exact and score test on pairs (above 1,000 pairs)",
            "McNemar exact and score test, paired (above 1,000 pairs)",
            True,
            ("tango", "tango"),
            large=True,
        ),
        GateTest(
            "tango+score",
            "exact and score Tango test on pairs (above 1,000 pairs)",
            "exact and score test (Tango's score, above 1,000 pairs), paired",
            True,
            ("tango", "tango"),
            large=True,
        ),
    )
}


def select(
    paired: bool, margin: float, test: str, n_base: int, n_cand: int, statistics: Statistics = UNPAIRED
) -> GateTest:
    """The test the gate runs on a cell of this kind and size (`test`: the statistic chosen for
    unpaired cells without a margin, by its name in `statistics`)."""
    large = max(n_base, n_cand) > CAP
    if paired:
        kind = "mcnemar" if margin <= 0 else "tango"
    elif margin > 0:
        kind = "chan"
    # the statistic users choose is for the plain case only: a margin needs a test that has one
    elif not large:
        return _chosen(statistics, test)
    else:
        kind = "chan"
    if large:
        kind = {"mcnemar": "mcnemar+score", "tango": "tango+score"}.get(kind, "chan+score")
    return REGISTRY[kind]


def by_kind(kind: GateKind, statistics: Statistics = UNPAIRED) -> GateTest:
    """The test a verdict's `kind` names."""
    return REGISTRY[kind] if kind in REGISTRY else _chosen(statistics, kind)


def detectable_drop(
    test: GateTest, n_base: int, n_cand: int, p_base: float, alpha: float, margin: float = 0.0, power: float = 0.8
) -> float | None:
    """The highest candidate rate, in whole percent, whose drop from p_base the test catches with at
    least `power` (None: not even a drop to 0). Rounded down, so the claim holds at the rate printed
    (power falls as the candidate rate rises)."""
    achieved = lru_cache(maxsize=None)(lambda pct: test.power(n_base, n_cand, p_base, pct / 100, margin, alpha))
    # power falls as the candidate rate rises: if a drop to 0 is not caught, none is
    if achieved(0) < power:
        return None
    low, high = 0, int(np.floor(p_base * 100 + 1e-9))  # in percent: low is caught, high perhaps not
    if achieved(high) >= power:
        return high / 100
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if achieved(mid) >= power else (low, mid)
    return low / 100
