"""Wald's sequential probability ratio test of one rate (p₀ against p₁ < p₀), shared notes,
"Sequential testing".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["SprtResult", "sprt", "sprt_bounds"]


def sprt_bounds(alpha: float = 0.05, beta: float = 0.2) -> tuple[float, float]:
    """Wald's (upper, lower) log-likelihood-ratio bounds: ln((1−β)/α) and ln(β/(1−α))."""
    return math.log((1 - beta) / alpha), math.log(beta / (1 - alpha))


_TIE = 1e-9


@dataclass(frozen=True)
class SprtResult:
    """`decision` is "regression" (H₁: p = p₁), "accept" (H₀: p = p₀) or "continue"."""

    decision: Literal["regression", "accept", "continue"]
    llr: float
    runs: int
    failures: int
    upper: float
    lower: float


def sprt(outcomes: Iterable[bool], p0: float, p1: float, *, alpha: float = 0.05, beta: float = 0.2) -> SprtResult:
    """Wald's SPRT of H₀ p = p₀ against H₁ p = p₁ < p₀ over passes (True) and failures, stopping
    at the first crossing. With p₀ = 1 a single failure decides (the ratio is infinite)."""
    if not 0 <= p1 < p0 <= 1:
        raise ValueError("need 0 <= p1 < p0 <= 1")
    upper, lower = sprt_bounds(alpha, beta)
    on_pass = math.log(p1 / p0) if p1 > 0 else -math.inf
    on_fail = math.log((1 - p1) / (1 - p0)) if p0 < 1 else math.inf
    llr, runs, failures = 0.0, 0, 0
    for passed in outcomes:
        runs += 1
        failures += not passed
        llr += on_pass if passed else on_fail
        # ties count as crossings: with p0=.95, p1=.8 two failures land exactly on ln 16
        if llr >= upper - _TIE:
            return SprtResult("regression", llr, runs, failures, upper, lower)
        if llr <= lower + _TIE:
            return SprtResult("accept", llr, runs, failures, upper, lower)
    return SprtResult("continue", llr, runs, failures, upper, lower)
