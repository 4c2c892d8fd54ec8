"""A rate as the report and the gate show it: x of n runs, with a confidence interval for the
proportion. It sits with the statistics, not the report, so that the gate reads it from here."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.stats.proportions import IntervalMethod, proportion_interval

__all__ = ["Rate", "rate"]


@dataclass(frozen=True)
class Rate:
    """x of n, with a confidence interval for the proportion."""

    x: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.x / self.n


def rate(x: int, n: int, confidence: float = 0.95, method: IntervalMethod = "wilson") -> Rate | None:
    """x of n with its interval (Wilson's by default); None for no runs."""
    # no runs: no rate at all, never a 0% that would read as a measurement
    if n == 0:
        return None
    interval = proportion_interval(x, n, confidence, method)
    return Rate(x, n, interval.low, interval.high)
