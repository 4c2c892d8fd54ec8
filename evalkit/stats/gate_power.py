"""Exact power of the tests the gate runs, for any two arm sizes: the rejection region of the test
at level α (a 0/1 grid over every table, or every (lost, gained) count of n pairs), summed under
the two binomial (or the trinomial) laws. "The test it ran" is taken literally: Boschloo's region
is exact wherever the gate's p-value is (`evalkit.stats.exact.boschloo_one`: up to 1,000 runs a
side), Fisher's mid-p region above; the margin tests' regions are their score tests' own.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np

from evalkit.stats.exact import (
    BOSCHLOO_ONE_TABLE_MAX,
    binom_pmf,
    boschloo_rejection,
    fisher_grid,
)
from evalkit.stats.margin import fm_power, tango_power
from evalkit.stats.sample_size import mcnemar_power

__all__ = ["GateTest", "detectable_drop", "gate_power", "unpaired_rejection"]

GateTest = Literal["boschloo", "fisher", "mcnemar", "fm", "tango"]


@lru_cache(maxsize=32)
def unpaired_rejection(n1: int, n2: int, alpha: float, test: str) -> np.ndarray:
    """The tables (x₁ baseline, x₂ candidate) the unpaired test rejects at α, as 0/1 floats."""
    if test == "fisher":
        return (fisher_grid(n1, n2) <= alpha).astype(float)
    # exact Boschloo as far as the gate's label says (one table's p is exact up to this size)
    return boschloo_rejection(n1, n2, alpha, max_tables=BOSCHLOO_ONE_TABLE_MAX).astype(float)


def gate_power(
    test: GateTest, n_base: int, n_cand: int, p_base: float, p_cand: float, alpha: float, margin: float = 0.0
) -> float:
    """P(the gate's test rejects at α) when the true rates are p_base and p_cand. Paired tests take
    n_base pairs whose outcomes are independent (the conservative case, as `mcnemar_power`)."""
    if test == "mcnemar":
        return mcnemar_power(n_base, p_base, p_cand, alpha=alpha)
    if test == "tango":
        return tango_power(n_base, p_base, p_cand, margin, alpha)
    if test == "fm":
        return fm_power(n_base, n_cand, p_base, p_cand, margin, alpha)
    region = unpaired_rejection(n_base, n_cand, alpha, test)
    return float(
        binom_pmf(np.arange(n_base + 1), n_base, p_base) @ region @ binom_pmf(np.arange(n_cand + 1), n_cand, p_cand)
    )


def detectable_drop(
    test: GateTest, n_base: int, n_cand: int, p_base: float, alpha: float, margin: float = 0.0, power: float = 0.8
) -> float | None:
    """The highest candidate rate, in whole percent, whose drop from p_base the test catches with at
    least `power` (None: not even a drop to 0). Rounded down, so the claim holds at the rate printed
    (power falls as the candidate rate rises)."""
    if gate_power(test, n_base, n_cand, p_base, 0.0, alpha, margin) < power:
        return None
    low, high = 0, int(np.floor(p_base * 100))  # in percent: low is caught, high perhaps not
    if gate_power(test, n_base, n_cand, p_base, high / 100, alpha, margin) >= power:
        return high / 100
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (
            (mid, high) if gate_power(test, n_base, n_cand, p_base, mid / 100, alpha, margin) >= power else (low, mid)
        )
    return low / 100
