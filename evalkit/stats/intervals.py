"""Statistics for binary run outcomes at small N: intervals, comparisons, power, pass^k and SPRT.

Pure functions; the only randomness (the bootstrap) comes from a `numpy.random.Generator` the
caller seeds. Formulas and reference values: shared notes, "Statistics for binary outcomes, small
N". Orientation for 2×2 tests: arm 1 is the reference (the baseline), arm 2 the other one (the
candidate); "greater" asks whether arm 1's rate is higher, i.e. whether the candidate dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import special

from evalkit.stats.exact import (
    TwoSampleTest,
    binom_cdf,
    binom_pmf,
    binom_sf,
    boschloo_rejection,
    boschloo_table,
    fisher_grid,
)

__all__ = [
    "Difference",
    "Interval",
    "SampleSize",
    "SprtResult",
    "approx_n",
    "bootstrap_mean",
    "boschloo",
    "clopper_pearson",
    "detectable_rate",
    "fisher",
    "floor_pvalue",
    "holm",
    "mcnemar",
    "mcnemar_power",
    "n_needed",
    "newcombe",
    "pass_hat_k",
    "proportion_interval",
    "sprt",
    "sprt_bounds",
    "two_sample_power",
    "wilson",
]

Alternative = Literal["greater", "less", "two-sided"]
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


def _check_counts(x: int, n: int) -> None:
    if n < 1 or not 0 <= x <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {x}/{n}")


def wilson(x: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval; exact 1 (or 0) at the boundary instead of a rounding error."""
    _check_counts(x, n)
    z = _z(confidence)
    p = x / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    low = 0.0 if x == 0 else (centre - half) / denom
    high = 1.0 if x == n else (centre + half) / denom
    return Interval(low, high)


def clopper_pearson(x: int, n: int, confidence: float = 0.95) -> Interval:
    """Exact (conservative) interval from beta quantiles."""
    _check_counts(x, n)
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
    low = d - math.hypot(p1 - w1.low, w2.high - p2)
    high = d + math.hypot(w1.high - p1, p2 - w2.low)
    return Difference(d, max(-1.0, low), min(1.0, high))


def _table(x1: int, n1: int, x2: int, n2: int) -> list[list[int]]:
    # scipy's exact 2×2 tests take one binomial experiment per *column*
    _check_counts(x1, n1)
    _check_counts(x2, n2)
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
    if alternative == "less":
        return boschloo_table(x2, n2, x1, n1)
    return min(1.0, 2 * min(boschloo_table(x1, n1, x2, n2), boschloo_table(x2, n2, x1, n1)))


def floor_pvalue(x: int, n: int, floor: float) -> float:
    """One-sided exact binomial p-value of H₀ "rate ≥ floor" against "rate < floor" for x of n."""
    _check_counts(x, n)
    return 1.0 if floor <= 0 else float(binom_cdf(x, n, floor))


def mcnemar(b: int, c: int, alternative: Alternative = "greater") -> float:
    """Exact McNemar on discordant pairs: b = reference passed and other failed, c = the reverse."""
    if b < 0 or c < 0:
        raise ValueError("discordant counts must be non-negative")
    n = b + c
    if n == 0:
        return 1.0
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
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def bootstrap_mean(
    values: Sequence[float] | Mapping[Any, int],
    rng: np.random.Generator,
    *,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap interval for a mean (retries per run are skewed and bounded); `values` may
    be given as value → how many times it occurs.

    A resample of n values with replacement holds each distinct value a Multinomial(n, share) number
    of times, so the resamples are drawn as counts of the distinct values: the same distribution as
    drawing n indices each time, at a cost that does not grow with n (retries take a few values)."""
    if isinstance(values, Mapping):
        pairs = sorted((float(v), k) for v, k in values.items() if k)
        distinct, counts = np.array([v for v, _ in pairs]), np.array([k for _, k in pairs], dtype=np.int64)
    else:
        distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    size = int(counts.sum())
    if size == 0:
        raise ValueError("bootstrap of an empty sample")
    means = rng.multinomial(size, counts / size, size=resamples) @ distinct / size
    a = (1 - confidence) / 2
    low, high = np.quantile(means, [a, 1 - a])
    return Interval(float(low), float(high))


def pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """τ-bench pass^k: C(c,k)/C(n,k) per scenario (c passes of n), averaged over scenarios with n ≥ k."""
    values = [math.comb(c, k) / math.comb(n, k) for c, n in counts if n >= k]
    return sum(values) / len(values) if values else None


# --- power -------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _rejects(n: int, alpha: float, test: TwoSampleTest) -> np.ndarray:
    """The rejection region as 0/1 floats, for the matrix products of `two_sample_power`."""
    rejected = boschloo_rejection(n, n, alpha) if test == "boschloo" else fisher_grid(n, n) <= alpha
    return rejected.astype(float)


def two_sample_power(
    n: int, p_base: float, p_cand: float, *, alpha: float = 0.05, test: TwoSampleTest = "boschloo"
) -> tuple[float, bool]:
    """Exact power of the one-sided unpaired test the gate runs, with n runs per arm (above
    BOSCHLOO_MAX_TABLES that is Fisher's mid-p, as in `boschloo`); returns (power, exact=True).
    Σ over tables of P(x₁) region[x₁, x₂] P(x₂), as two matrix-vector products."""
    ks = np.arange(n + 1)
    power = binom_pmf(ks, n, p_base) @ _rejects(n, alpha, test) @ binom_pmf(ks, n, p_cand)
    return float(power), True


def mcnemar_power(n: int, p_base: float, p_cand: float, *, alpha: float = 0.05) -> float:
    """Exact power of the one-sided exact McNemar test on n pairs whose two outcomes are independent
    (the conservative case: pairing gains nothing beyond it unless outcomes correlate). A pair is
    discordant "lost" with q₁ = p_base(1 − p_cand) and "gained" with q₂ = (1 − p_base)p_cand."""
    lost, gained = p_base * (1 - p_cand), (1 - p_base) * p_cand
    if lost + gained == 0:
        return 0.0
    d = np.arange(1, n + 1)
    critical = _mcnemar_critical(n, alpha)  # for d discordant pairs: reject when d_lost ≥ critical[d - 1]
    reject = binom_sf(critical - 1, d, lost / (lost + gained))
    return float((binom_pmf(d, n, lost + gained) * reject).sum())


@lru_cache(maxsize=64)
def _mcnemar_critical(n: int, alpha: float) -> np.ndarray:
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
    test: TwoSampleTest = "boschloo",
    limit: int = 2000,
) -> SampleSize:
    """Smallest n per arm whose exact power reaches `power`. From the normal approximation's guess,
    exact power is computed in steps of 8 until it brackets the target, then at every n of the last
    step (exact tests' power is a sawtooth in n, so a slightly larger n can dip below again). Raises
    ValueError past `limit` runs per arm."""

    def achieved(n: int) -> float:
        return two_sample_power(n, p_base, p_cand, alpha=alpha, test=test)[0]

    step, n = 8, approx_n(p_base, p_cand, alpha=alpha, power=power)
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
    test: TwoSampleTest | Literal["mcnemar"] = "boschloo",
) -> float | None:
    """The highest candidate rate that the test still detects with the given power at n per arm
    (None when even a drop to 0 is not detected). Power falls as the candidate rate rises.
    `mcnemar`: n independent pairs, as `mcnemar_power`."""

    def achieved(p: float) -> float:
        if test == "mcnemar":
            return mcnemar_power(n, p_base, p, alpha=alpha)
        return two_sample_power(n, p_base, p, alpha=alpha, test=test)[0]

    if achieved(0.0) < power:
        return None
    low, high = 0.0, p_base
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if achieved(mid) >= power else (low, mid)
    return low


# --- sequential --------------------------------------------------------------------------------


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
