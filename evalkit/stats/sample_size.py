"""Power and sample size of the two-arm tests: the exact power of Boschloo's (or Fisher's) test and of
exact McNemar on independent pairs, the runs per arm a drop needs, and the smallest rate a design
detects with a given power.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special

from evalkit.stats.gate_tests import select
from evalkit.stats.registry import UNPAIRED

__all__ = [
    "SampleSize",
    "approx_n",
    "detectable_rate",
    "mcnemar_power",
    "n_needed",
    "two_sample_power",
]


def two_sample_power(
    n: int, p_base: float, p_cand: float, *, alpha: float = 0.05, test: str = UNPAIRED.default
) -> tuple[float, bool]:
    """Exact power of the one-sided unpaired test the gate runs with n runs per arm (`evalkit.stats.
    gate_tests.select`: Boschloo's, or Fisher's, up to 1,000 a side); returns (power, exact=True).
    The test's region is a staircase, so this costs memory in proportion to n, at any n."""
    gate_test = select(False, 0.0, test, n, n)
    return gate_test.power(n, n, p_base, p_cand, 0.0, alpha), True


def mcnemar_power(n: int, p_base: float, p_cand: float, *, alpha: float = 0.05) -> float:
    """Exact power of the one-sided exact McNemar test on n pairs whose two outcomes are independent
    (the conservative case: pairing gains nothing beyond it unless outcomes correlate). A pair is
    discordant "lost" with q₁ = p_base(1 − p_cand) and "gained" with q₂ = (1 − p_base)p_cand. Above
    1,000 pairs, the gate's test there (`select`)."""
    return select(True, 0.0, UNPAIRED.default, n, n).power(n, n, p_base, p_cand, 0.0, alpha)


@dataclass(frozen=True)
class SampleSize:
    """Runs per arm for a design, from the exact power of the test (`exact` is always True now)."""

    n: int
    power: float
    exact: bool


def approx_n(p_base: float, p_cand: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Fleiss' normal-approximation sample size per arm (one-sided, no continuity correction)."""
    delta = p_base - p_cand
    if delta <= 0:
        raise ValueError("the candidate rate must be below the baseline rate")
    pbar = (p_base + p_cand) / 2
    # -ndtri(α), not ndtri(1 - α): for α under about 1e-16, 1 - α is 1.0 and its quantile infinite
    z_a, z_b = -float(special.ndtri(alpha)), float(special.ndtri(power))
    root = z_a * math.sqrt(2 * pbar * (1 - pbar)) + z_b * math.sqrt(p_base * (1 - p_base) + p_cand * (1 - p_cand))
    return max(2, math.ceil((root / delta) ** 2))


def n_needed(
    p_base: float,
    p_cand: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = UNPAIRED.default,
    limit: int = 2000,
) -> SampleSize:
    """Smallest n per arm whose exact power reaches `power`. From the normal approximation's guess,
    exact power is computed in steps of 8 until it brackets the target, then at every n of the last
    step (exact tests' power is a sawtooth in n, so a slightly larger n can dip below again). Raises
    ValueError past `limit` runs per arm."""

    def achieved(n: int) -> float:
        return two_sample_power(n, p_base, p_cand, alpha=alpha, test=test)[0]

    step, n = 8, approx_n(p_base, p_cand, alpha=alpha, power=power)
    # the normal guess is close but on either side: walk down while the power holds, or up until it does
    if achieved(n) >= power:
        while n > 2 and achieved(max(2, n - step)) >= power:
            n = max(2, n - step)
        low = max(2, n - step)
    else:
        while achieved(n) < power:
            if n > limit:
                raise ValueError(f"more than {limit} runs per arm needed for {p_base} → {p_cand} at power {power}")
            n += step
        low = n - step
    first = next(k for k in range(low, n + 1) if achieved(k) >= power)
    return SampleSize(first, achieved(first), True)


def detectable_rate(
    n: int,
    p_base: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = UNPAIRED.default,
) -> float | None:
    """The highest candidate rate that the test still detects with the given power at n per arm
    (None when even a drop to 0 is not detected). Power falls as the candidate rate rises.
    `test`: a statistic of `evalkit.stats.registry.UNPAIRED`, or `mcnemar`: n independent pairs, as
    `mcnemar_power`."""

    def achieved(p: float) -> float:
        if test == "mcnemar":
            return mcnemar_power(n, p_base, p, alpha=alpha)
        return two_sample_power(n, p_base, p, alpha=alpha, test=test)[0]

    if achieved(0.0) < power:
        return None
    low, high = 0.0, p_base
    # 40 halvings put the rate within 2⁻⁴⁰ of the boundary, far below the whole percent reported
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if achieved(mid) >= power else (low, mid)
    return low
