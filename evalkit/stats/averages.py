"""Averages over runs: a bootstrap interval for a mean (retries per run) and τ-bench's pass^k.

The only randomness comes from a `numpy.random.Generator` the caller seeds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from evalkit.stats.proportions import Interval

__all__ = ["bootstrap_mean", "pass_hat_k"]


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
    # each row: how often each distinct value is drawn in one resample; times the values, its mean
    means = rng.multinomial(size, counts / size, size=resamples) @ distinct / size
    a = (1 - confidence) / 2
    low, high = np.quantile(means, [a, 1 - a])
    return Interval(float(low), float(high))


def pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """τ-bench pass^k: C(c,k)/C(n,k) per scenario (c passes of n), averaged over scenarios with n ≥ k."""
    # exact fractions: a float sum differs between Python 3.11 and 3.12 (whose sum() compensates), and
    # a mean such as 17/40 then prints as 42% or 43%
    values = [Fraction(math.comb(c, k), math.comb(n, k)) for c, n in counts if n >= k]
    return float(sum(values, Fraction(0)) / len(values)) if values else None
