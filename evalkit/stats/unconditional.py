"""Exact unconditional tests of "side 1's rate exceeds side 2's by more than δ", for two independent
binomial arms or for pairs, with the regions they reject at α and the confidence intervals they give.

A test orders the outcome tables by a statistic, and its p-value is the largest probability, over
the rates of the null hypothesis p₁ − p₂ ≤ δ, of a table at least as extreme as the one observed.
The regions are monotone (`evalkit.stats.regions`), so the largest probability is on the boundary
p₁ − p₂ = δ, over one nuisance rate. The tests differ in their ordering:

- `fm`: Farrington & Manning's score statistic at δ (Stat. Med. 1990, 9:1447–1454): Chan's exact
  test (Chan 1998, Stat. Med. 17:1403–1413); at δ = 0 the pooled score statistic, Suissa & Shuster's
  exact unconditional test (1985, J. R. Statist. Soc. A 148:317–327);
- `fisher`: Fisher's one-sided p-value, whatever δ: at δ = 0 this is Boschloo's test (1970,
  Statistica Neerlandica 24:1–9), and at δ ≠ 0 its extension to a margin;
- `tango`: Tango's score statistic for paired proportions at δ (Stat. Med. 1998, 17:891–908), over
  the trinomial law of (lost, gained, tied) pairs;
- `mcnemar`: the exact conditional McNemar p-value, whatever δ (at δ = 0 its unconditional form).

Ties: statistics are rounded to 9 decimals (p-values on the log scale), so tables within rounding
of each other are equally extreme. A confidence interval inverts the test: the drops δ whose
hypothesis "drop ≤ δ" and "drop ≥ δ" the test does not reject at α, at 0.001 resolution and exact at
the `anchors` (the margin, and 0), so that an interval never contradicts the test's own decision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import special

from evalkit.stats.exact import fisher_grid
from evalkit.stats.regions import PairStaircase, Staircase, boundary_size
from evalkit.stats.score import fm_z, tango_z

__all__ = ["Order", "Region", "Table", "exact_interval", "exact_pvalue", "ordering_region", "rejection_region"]

Order = Literal["fm", "fisher", "tango", "mcnemar"]
Region = Staircase | PairStaircase
PAIRED: frozenset[Order] = frozenset({"tango", "mcnemar"})
_DIGITS = 9
_STEP = 0.001  # the intervals' resolution (a tenth of a point)


@dataclass(frozen=True)
class Table:
    """Unpaired: x1 of n1 and x2 of n2. Paired: n pairs, x1 won by side 1 only, x2 by side 2 only
    (n2 = n1 = n). The hypothesis tested is always "p₁ − p₂ > δ"."""

    x1: int
    n1: int
    x2: int
    n2: int

    def swapped(self) -> Table:
        return Table(self.x2, self.n2, self.x1, self.n1)


# --- the orderings ----------------------------------------------------------------------------------


def _stat(order: Order, n1: int, n2: int, delta: float, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """How extreme each table is (larger: more evidence for p₁ − p₂ > δ), rounded for ties. Paired:
    x1 and x2 are the discordant counts of n1 pairs."""
    if order == "fm":
        z = fm_z(x1, n1, x2, n2, delta)
    elif order == "tango":
        z = tango_z(x1, x2, n1, delta)
    elif order == "fisher":
        # −log p: larger is more extreme, as for the score statistics; the floor keeps the log finite
        z = -np.log(np.maximum(fisher_grid(n1, n2)[x1, x2], 1e-300))
    else:
        # McNemar's exact conditional p: of d discordant pairs, P(X ≥ x1) for X ~ Binomial(d, ½)
        d = x1 + x2
        z = -np.log(np.maximum(np.where(d > 0, special.bdtrc(x1 - 1, d, 0.5), 1.0), 1e-300))
    out: np.ndarray = np.round(z, _DIGITS)
    return out


_MATRIX_MAX = 1000  # runs a side (pairs) up to which every table's statistic is kept (8 MB at most)


def _stat_matrix(order: Order, n1: int, n2: int, delta: float) -> np.ndarray:
    """Unpaired: [x1, x2]. Paired: [d, x1] for d discordant pairs of which x1 won by side 1 (−∞ where
    x1 > d, so a row counts only real tables). Kept for many small sizes, or a few large ones."""
    return (_small_matrix if max(n1, n2) <= 200 else _large_matrix)(order, n1, n2, delta)


def _tabulate(order: Order, n1: int, n2: int, delta: float) -> np.ndarray:
    if order not in PAIRED:
        return _stat(order, n1, n2, delta, np.arange(n1 + 1)[:, None], np.arange(n2 + 1)[None, :])
    d, x1 = np.arange(n1 + 1)[:, None], np.arange(n1 + 1)[None, :]
    valid = x1 <= d
    # an impossible table is given a real one's statistic, then −∞, which no threshold counts
    values = _stat(order, n1, n2, delta, np.where(valid, x1, 0), np.where(valid, d - x1, 0))
    out: np.ndarray = np.where(valid, values, -np.inf)
    return out


_small_matrix = lru_cache(maxsize=256)(_tabulate)  # ≤ 0.3 MB each
_large_matrix = lru_cache(maxsize=4)(_tabulate)  # ≤ 8 MB each


@dataclass(frozen=True)
class _Ordering:
    order: Order
    n1: int
    n2: int
    delta: float  # the statistic's own δ (`fisher` and `mcnemar` ignore it)
    tabulate: bool = True  # keep every table's statistic (for the many regions of a critical value)

    @property
    def paired(self) -> bool:
        return self.order in PAIRED

    def stat(self, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
        matrix = self.matrix()
        if matrix is not None:
            out: np.ndarray = matrix[x1 + x2, x1] if self.paired else matrix[x1, x2]  # paired rows: d = x1 + x2
            return out
        return _stat(self.order, self.n1, self.n2, self.delta, x1, x2)

    def matrix(self) -> np.ndarray | None:
        """Every table's statistic (paired: by discordant pairs d and x1), when that is small enough to keep."""
        if not self.tabulate or max(self.n1, self.n2) > _MATRIX_MAX:
            return None
        return _stat_matrix(self.order, self.n1, self.n2, self.delta)

    def rows(self) -> np.ndarray:
        return np.arange(self.n1 + 1)

    def region(self, z: float) -> Region:
        """The tables at least as extreme as a statistic of z, closed to a monotone region."""
        rows = self.rows()
        matrix = self.matrix()
        if matrix is not None:  # each row is monotone: count its entries at least z
            at_least = (matrix >= z).sum(axis=1)
            if not self.paired:
                # closed: a table with more baseline successes and the same x2 is at least as extreme
                return Staircase(self.n1, self.n2, np.maximum.accumulate(at_least - 1))
            # need[d]: the least x1 of d discordant pairs inside; closed as the slow path below is
            need = np.minimum.accumulate((rows + 1 - at_least)[::-1])[::-1]
            return PairStaircase(self.n1, np.minimum.accumulate(need - rows) + rows)
        if not self.paired:  # per x1: the largest x2 with stat ≥ z (the statistic falls as x2 rises)
            low, high = np.full(rows.size, -1), np.full(rows.size, self.n2 + 1)
            while np.any(high - low > 1):
                mid = (low + high) // 2
                ok = self.stat(rows, np.clip(mid, 0, self.n2)) >= z
                move = high - low > 1
                low, high = np.where(move & ok, mid, low), np.where(move & ~ok, mid, high)
            return Staircase(self.n1, self.n2, np.maximum.accumulate(low))
        # per number of discordant pairs d: the least x1 with stat(x1, d − x1) ≥ z (it rises with x1)
        low, high = np.full(rows.size, -1), rows + 1
        while np.any(high - low > 1):
            mid = (low + high) // 2
            ok = self.stat(np.clip(mid, 0, rows), rows - np.clip(mid, 0, rows)) >= z
            move = high - low > 1
            low, high = np.where(move & ~ok, mid, low), np.where(move & ok, mid, high)
        need = np.minimum.accumulate(high[::-1])[::-1]  # non-decreasing in d
        return PairStaircase(self.n1, np.minimum.accumulate(need - rows) + rows)  # rises ≤ 1 per pair

    def least_inside(self, region: Region) -> float:
        rows = self.rows()
        if isinstance(region, Staircase):
            x1, x2 = rows[region.limit >= 0], region.limit[region.limit >= 0]
        else:
            keep = region.need <= rows
            x1, x2 = region.need[keep], (rows - region.need)[keep]
        return float(self.stat(x1, x2).min()) if x1.size else math.inf

    def greatest_outside(self, region: Region) -> float:
        rows = self.rows()
        if isinstance(region, Staircase):
            keep = region.limit < self.n2
            x1, x2 = rows[keep], region.limit[keep] + 1
        else:
            keep = region.need >= 1
            x1, x2 = region.need[keep] - 1, (rows - region.need + 1)[keep]
        return float(self.stat(x1, x2).max()) if x1.size else -math.inf


def _size(region: Region, delta: float, level: float | None = None) -> float:
    """The test's p-value for this region: its largest probability on the boundary p₁ − p₂ = δ
    (`level`: only its side of this level matters)."""
    return boundary_size(region, delta, level=level)


def _ordering(order: Order, table: Table, delta: float) -> _Ordering:
    # `fisher` and `mcnemar` rank tables alike at every δ: one ordering, so one cache entry, for all
    return _Ordering(order, table.n1, table.n2, delta if order in ("fm", "tango") else 0.0)


@lru_cache(maxsize=4096)
def exact_pvalue(order: Order, table: Table, delta: float) -> float:
    """One-sided p of "p₁ − p₂ > δ" for the observed table, exact unconditional."""
    ordering = _ordering(order, table, delta)
    z = float(ordering.stat(np.array(table.x1), np.array(table.x2)))
    return _size(ordering.region(z), delta)


@lru_cache(maxsize=4096)
def _rejects(order: Order, table: Table, delta: float, alpha: float) -> bool:
    """Whether the test rejects "p₁ − p₂ > δ" at α (the p-value's side of α only: cheaper)."""
    ordering = _ordering(order, table, delta)
    z = float(ordering.stat(np.array(table.x1), np.array(table.x2)))
    return _size(ordering.region(z), delta, level=alpha) <= alpha


@lru_cache(maxsize=256)
def ordering_region(order: Order, n1: int, n2: int, delta: float, z: float) -> Region:
    """The tables whose statistic (at δ) is at least z: a score test's region at its critical value."""
    ordering = _Ordering(order, n1, n2, delta if order in ("fm", "tango") else 0.0, tabulate=False)
    return ordering.region(round(z, _DIGITS))


_CRITICAL: dict[tuple[Order, float, float], float] = {}
_CLOSE = 1e-7


@lru_cache(maxsize=256)
def rejection_region(order: Order, n1: int, n2: int, delta: float, alpha: float) -> Region:
    """The tables the test rejects at α: those at least as extreme as the least extreme statistic
    whose p-value is ≤ α, found by bisection over the statistics' distinct values."""
    ordering = _Ordering(order, n1, n2, delta if order in ("fm", "tango") else 0.0)
    start = _CRITICAL.get((order, round(delta, 12), alpha))  # the last critical value, for another size
    if start is None:
        # a first guess: where a −log p (fisher, mcnemar) or a normal z alone would reach α
        start = -math.log(alpha) if order in ("fisher", "mcnemar") else -float(special.ndtri(alpha))
    low, high = start - 0.05, start + 0.05

    def size(z: float) -> float:
        return _size(ordering.region(z), delta, level=alpha)

    while size(low) <= alpha and math.isfinite(ordering.greatest_outside(ordering.region(low))):
        low -= 2 * (high - low)  # even the looser threshold holds α: loosen further
    while size(high) > alpha and math.isfinite(ordering.least_inside(ordering.region(high))):
        high += 2 * (high - low)
    # low: p > α (or nothing is looser); high: p ≤ α (or nothing is stricter). Bisect the values between,
    # to _CLOSE: a table within it of the critical value may be left out (its probability is negligible,
    # and leaving it out errs towards less power; below a few hundred runs no two values are so close)
    while high - low > _CLOSE * max(1.0, abs(high)):
        middle = ordering.least_inside(ordering.region((low + high) / 2))
        if middle >= high:  # no value in [mid, high): try the greatest value below mid
            middle = ordering.greatest_outside(ordering.region((low + high) / 2))
            if middle <= low:
                break
        if size(middle) <= alpha:
            high = middle
        else:
            low = middle
    region = ordering.region(high)
    while _size(region, delta) > alpha:  # the bisection's shortcut misjudged: the next stricter value
        stricter = ordering.least_inside(ordering.region(np.nextafter(high, math.inf)))
        if not math.isfinite(stricter):
            return _empty(ordering)
        high, region = stricter, ordering.region(stricter)
    if math.isfinite(high):
        _CRITICAL[(order, round(delta, 12), alpha)] = high
    return region


def _empty(ordering: _Ordering) -> Region:
    rows = ordering.rows()
    if ordering.paired:
        return PairStaircase(ordering.n1, rows + 1)
    return Staircase(ordering.n1, ordering.n2, np.full(rows.size, -1))


# --- intervals ----------------------------------------------------------------------------------------


def exact_interval(
    orders: tuple[Order, Order], table: Table, alpha: float, anchors: tuple[float, ...], guess: tuple[float, float]
) -> tuple[float, float]:
    """(δ_low, δ_high): the 1 − 2α interval of p₁ − p₂, each end inverting one one-sided test.
    δ_low is the largest δ at which "p₁ − p₂ > δ" is rejected at α (ordered by `orders[0]`), δ_high
    the least δ at which "p₁ − p₂ < δ" is (by `orders[1]`, on the swapped table); exact at each
    anchor, and at _STEP resolution between them. `guess`: a score interval to start from."""

    def drop_rejected(delta: float) -> bool:
        if delta in anchors:  # exactly as the verdict decides it
            return exact_pvalue(orders[0], table, round(delta, 12)) <= alpha
        return _rejects(orders[0], table, round(delta, 12), alpha)

    def rise_rejected(delta: float) -> bool:  # "p₁ − p₂ < δ" is "p₂ − p₁ > −δ", the table swapped
        if delta in anchors:
            return exact_pvalue(orders[1], table.swapped(), round(-delta, 12)) <= alpha
        return _rejects(orders[1], table.swapped(), round(-delta, 12), alpha)

    low = _boundary(drop_rejected, guess[0], anchors)
    high = -_boundary(lambda u: rise_rejected(-u), -guess[1], tuple(-a for a in anchors))
    return low, high


def _snap(value: float) -> float:
    return round(value / _STEP) * _STEP


def _boundary(rejected: Callable[[float], bool], guess: float, anchors: tuple[float, ...]) -> float:
    """The largest δ found rejected, for a test that rejects every δ below some point: the anchors
    first (so the answer agrees with each of them), then a search outwards from the guess and a
    bisection on the _STEP grid. −1 stands for "rejected" and 1 for "not" (no rate differs by more)."""
    low, high = -1.0, 1.0
    for a in anchors:
        if low < a < high:
            low, high = (a, high) if rejected(a) else (low, a)
    probe, step = _snap(guess), 5 * _STEP
    while True:
        if not low < probe < high:
            probe = _snap((low + high) / 2)
            if not low < probe < high:
                return low
        if rejected(probe):
            low, probe = probe, _snap(probe + step)
        else:
            high, probe = probe, _snap(probe - step)
        step *= 2
