"""One proportion and the difference of two: Wilson and Clopper–Pearson intervals for x of n, and
Newcombe's hybrid score interval for p̂₁ − p̂₂ (shared notes, "Statistics for binary outcomes, small N").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from scipy import special

__all__ = [
    "Difference",
    "Interval",
    "IntervalMethod",
    "check_counts",
    "clopper_pearson",
    "newcombe",
    "proportion_interval",
    "wilson",
]


IntervalMethod = Literal["wilson", "clopper-pearson"]


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class Difference:
    """p̂₁ − p̂₂ with an interval for it."""

    estimate: float
    low: float
    high: float


@lru_cache(maxsize=8)
def _z(confidence: float) -> float:
    return float(special.ndtri(1 - (1 - confidence) / 2))  # the normal quantile (scipy.stats.norm.ppf's)


def check_counts(x: int, n: int) -> None:
    """A count of successes out of n trials, or a ValueError saying what it needs."""
    if n < 1 or not 0 <= x <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {x}/{n}")


def wilson(x: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval; exact 1 (or 0) at the boundary instead of a rounding error."""
    check_counts(x, n)
    z = _z(confidence)
    p = x / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    # at 0 or n the formula gives 0 or 1 up to rounding; set exactly, a 0/10 interval starts at 0
    low = 0.0 if x == 0 else (centre - half) / denom
    high = 1.0 if x == n else (centre + half) / denom
    return Interval(low, high)


def clopper_pearson(x: int, n: int, confidence: float = 0.95) -> Interval:
    """Exact (conservative) interval from beta quantiles."""
    check_counts(x, n)
    from scipy import stats as sps  # not the default method: scipy.stats stays out of a report's start-up

    a = 1 - confidence
    low = 0.0 if x == 0 else float(sps.beta.ppf(a / 2, x, n - x + 1))
    high = 1.0 if x == n else float(sps.beta.ppf(1 - a / 2, x + 1, n - x))
    return Interval(low, high)


def proportion_interval(x: int, n: int, confidence: float = 0.95, method: IntervalMethod = "wilson") -> Interval:
    if method == "wilson":
        return wilson(x, n, confidence)
    if method == "clopper-pearson":
        return clopper_pearson(x, n, confidence)
    raise ValueError(f"unknown interval method {method!r}")


def newcombe(x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95) -> Difference:
    """Newcombe's hybrid score interval (method 10) for p̂₁ − p̂₂, from the two Wilson intervals."""
    p1, p2 = x1 / n1, x2 / n2
    w1, w2 = wilson(x1, n1, confidence), wilson(x2, n2, confidence)
    d = p1 - p2
    # each end combines the two Wilson intervals' distances on the side it moves towards
    low = d - math.hypot(p1 - w1.low, w2.high - p2)
    high = d + math.hypot(w1.high - p1, p2 - w2.low)
    return Difference(d, max(-1.0, low), min(1.0, high))
