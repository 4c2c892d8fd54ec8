"""One-sided p-values of the tests that compare two arms or one arm with a floor (Fisher, Boschloo,
exact McNemar, the exact binomial test of a floor), and Holm's adjustment across them.

Orientation for 2×2 tests: arm 1 is the reference (the baseline), arm 2 the other one (the
candidate); "greater" asks whether arm 1's rate is higher, i.e. whether the candidate dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np

from evalkit.stats.exact import binom_cdf, binom_sf, boschloo_table
from evalkit.stats.proportions import check_counts

__all__ = ["Alternative", "boschloo", "fisher", "floor_pvalue", "holm", "mcnemar", "mcnemar_critical"]


Alternative = Literal["greater", "less", "two-sided"]


def _table(x1: int, n1: int, x2: int, n2: int) -> list[list[int]]:
    # scipy's exact 2×2 tests take one binomial experiment per *column*
    check_counts(x1, n1)
    check_counts(x2, n2)
    return [[x1, x2], [n1 - x1, n2 - x2]]


def fisher(x1: int, n1: int, x2: int, n2: int, alternative: Alternative = "greater") -> float:
    from scipy import stats as sps  # the gate's `test: fisher` only

    return float(sps.fisher_exact(_table(x1, n1, x2, n2), alternative=alternative).pvalue)


def boschloo(x1: int, n1: int, x2: int, n2: int, alternative: Alternative = "greater") -> float:
    """Boschloo's exact test; uniformly more powerful than Fisher's, by `evalkit.stats.exact` (one
    matrix product per distinct table; Fisher mid-p above BOSCHLOO_MAX_TABLES). Two-sided: twice the
    smaller one-sided p-value, as scipy's `boschloo_exact` defines it (whose cost, about n^2.7, made a
    report on unpaired cells of thousands of runs take hours)."""
    _table(x1, n1, x2, n2)
    if (x1 + x2) in (0, n1 + n2):
        return 1.0  # no information about a difference; scipy returns nan here
    if alternative == "greater":
        return boschloo_table(x1, n1, x2, n2)
    # "less" is "greater" with the arms swapped: one implementation of the one-sided test
    if alternative == "less":
        return boschloo_table(x2, n2, x1, n1)
    return min(1.0, 2 * min(boschloo_table(x1, n1, x2, n2), boschloo_table(x2, n2, x1, n1)))


def floor_pvalue(x: int, n: int, floor: float) -> float:
    """One-sided exact binomial p-value of H₀ "rate ≥ floor" against "rate < floor" for x of n."""
    check_counts(x, n)
    # a floor of 0 every rate meets: no evidence can show a rate under it
    return 1.0 if floor <= 0 else float(binom_cdf(x, n, floor))


def mcnemar(b: int, c: int, alternative: Alternative = "greater") -> float:
    """Exact McNemar on discordant pairs: b = reference passed and other failed, c = the reverse."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
    # under H₀ each discordant pair goes either way with probability ½: P(X ≥ b), X ~ Binomial(n, ½)
    if alternative == "greater":
        return float(binom_sf(b - 1, n, 0.5))
    if alternative == "less":
        return float(binom_cdf(b, n, 0.5))
    # scipy's binomtest, two-sided: the outcomes no likelier than b; at p = ½ the mirror tail, twice
    return 1.0 if b == c else min(1.0, 2 * float(binom_cdf(min(b, c), n, 0.5)))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (reject where adjusted p ≤ α), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        # the running maximum keeps adjusted p-values in the order of the raw ones (step-down)
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


_TIE = 1e-9  # a tail within rounding of α counts as α


@lru_cache(maxsize=64)
def mcnemar_critical(n: int, alpha: float) -> np.ndarray:
    """For d = 1..n discordant pairs, the least b with P(Binom(d, ½) ≥ b) ≤ α (d + 1: never), by a
    bisection over b for every d at once (the tail falls as b rises). A tail within rounding of α
    (they are multiples of 2⁻ᵈ: α = ½ meets one) counts as α."""
    d = np.arange(1, n + 1)
    low, high = np.zeros_like(d), d + 1  # P(X ≥ low) > α (low = 0: 1 > α); high rejects, or is "never"
    while np.any(high - low > 1):
        middle = (low + high) // 2
        rejects = binom_sf(middle - 1, d, 0.5) <= alpha * (1 + _TIE)
        low, high = np.where(rejects, low, middle), np.where(rejects, middle, high)
    return high
