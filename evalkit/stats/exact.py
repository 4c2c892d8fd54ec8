"""Exact one-sided tests for two independent binomial arms: Fisher, Fisher mid-p and Boschloo.

Orientation as in `evalkit.stats.pvalues`: arm 1 is the reference (the baseline), and the one-sided
alternative is that arm 1's rate is higher (the candidate dropped). Tables are indexed (x₁, x₂).

Boschloo's p-value is the supremum over the common rate π of P_π(Fisher p ≤ the observed Fisher p).
scipy's `boschloo_exact` costs about n^2.7 per table (seconds at a pooled cell of 425 runs per arm,
hours for a gate at N = 400). Here one table costs one matrix product over a grid of π (the tables
at least as extreme, as a 0/1 matrix between the two arms' binomial probabilities), refined around
the best grid point, and every distinct table is computed once. Above BOSCHLOO_MAX_TABLES tables
((n₁+1)(n₂+1)) the test is Fisher's mid-p, which agrees with Boschloo's there to within the
tolerance `tests/stats/test_exact.py` checks (its size is within a few percent of α, see
`benchmarks/gate_calibration.py`), at a cost linear in the number of tables.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import special

from evalkit.stats.registry import UNPAIRED

# scipy.special, not scipy.stats, for the binomial: importing scipy.stats costs every report and gate
# about 0.35 s (scipy.optimize 0.13 s more), and its binomial functions wrap these.

__all__ = [
    "BOSCHLOO_MAX_TABLES",
    "binom_cdf",
    "binom_pmf",
    "binom_sf",
    "boschloo_pvalues",
    "boschloo_table",
    "fisher_grid",
    "midp",
    "midp_grid",
    "unpaired_pvalues",
]

BOSCHLOO_MAX_TABLES = 501 * 501  # up to 500 runs per arm
_NUISANCE_GRID = 1001  # points of π; the best one is then refined by a bounded scalar search
_TIE = 1e-9  # tables whose Fisher p-values differ by less (relatively) are equally extreme
_PIS = np.linspace(0.0, 1.0, _NUISANCE_GRID)


def binom_pmf(k: np.ndarray | int, n: int, p: np.ndarray | float) -> np.ndarray:
    """P(X = k) for X ~ Binomial(n, p), from log-gamma (scipy.stats' formula before 1.9; within 1e-11
    of today's, relatively: tests/stats/test_exact.py)."""
    k = np.asarray(k, dtype=float)
    out: np.ndarray = np.exp(_log_comb(n, k) + special.xlogy(k, p) + special.xlog1py(n - k, -np.asarray(p)))
    return out


def binom_sf(k: np.ndarray | int, n: np.ndarray | int, p: np.ndarray | float) -> np.ndarray:
    """P(X > k) for X ~ Binomial(n, p) (1 for k < 0, 0 for k ≥ n, as scipy.stats.binom.sf)."""
    k, n = np.asarray(k), np.asarray(n)
    # bdtrc returns nan outside its domain; the clip keeps it there and `where` sets the limits
    out: np.ndarray = np.where(k >= n, 0.0, special.bdtrc(np.clip(k, -1, n), n, p))
    return out


def binom_cdf(k: np.ndarray | int, n: np.ndarray | int, p: np.ndarray | float) -> np.ndarray:
    """P(X ≤ k) for X ~ Binomial(n, p) (0 for k < 0, 1 for k ≥ n, as scipy.stats.binom.cdf)."""
    k, n = np.asarray(k), np.asarray(n)
    out: np.ndarray = np.where(k < 0, 0.0, np.where(k >= n, 1.0, special.bdtr(np.clip(k, 0, n), n, p)))
    return out


def _conditional(n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """For every table: P(X₁ = x₁ | x₁+x₂) and P(X₁ > x₁ | x₁+x₂) (hypergeometric), from log
    binomial coefficients and a reversed cumulative sum along each margin (scipy's hypergeom.sf
    per table is the slow part of a large grid)."""
    x1 = np.arange(n1 + 1)[:, None]
    x2 = np.arange(n2 + 1)[None, :]
    pmf = _hypergeom_pmf(x1, n1, x2, n2)
    above = np.zeros_like(pmf)
    for total in range(n1 + n2 + 1):  # along the margin x₁ + x₂ = total, from the largest x₁ down
        rows = np.arange(min(total, n1), max(0, total - n2) - 1, -1)
        values = pmf[rows, total - rows]
        # each table's upper tail is the mass of the tables before it on the margin (strictly larger x₁)
        above[rows, total - rows] = np.concatenate(([0.0], np.cumsum(values)[:-1]))
    return pmf, above


def _hypergeom_pmf(x1: np.ndarray, n1: int, x2: np.ndarray, n2: int) -> np.ndarray:
    """P(X₁ = x₁ | X₁ + X₂ = x₁ + x₂) for two binomial arms of n₁ and n₂ runs (Fisher's conditional law)."""
    out: np.ndarray = np.exp(_log_comb(n1, x1) + _log_comb(n2, x2) - _log_comb(n1 + n2, x1 + x2))
    return out


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    out: np.ndarray = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return out


@lru_cache(maxsize=16)
def fisher_grid(n1: int, n2: int) -> np.ndarray:
    """One-sided Fisher p-value P(X₁ ≥ x₁ | x₁+x₂) for every table (x₁, x₂)."""
    pmf, above = _conditional(n1, n2)
    grid: np.ndarray = np.minimum(1.0, pmf + above)
    return grid


@lru_cache(maxsize=16)
def midp_grid(n1: int, n2: int) -> np.ndarray:
    """Fisher's mid-p: P(X₁ > x₁ | margins) + ½ P(X₁ = x₁ | margins), for every table."""
    pmf, above = _conditional(n1, n2)
    grid: np.ndarray = np.minimum(1.0, above + 0.5 * pmf)
    return grid


def _binom_rows(n: int, pis: np.ndarray) -> np.ndarray:
    return binom_pmf(np.arange(n + 1)[None, :], n, pis[:, None])


@lru_cache(maxsize=32)
def _grid_rows(n: int) -> np.ndarray:
    return _binom_rows(n, _PIS)


def _tail(n1: int, n2: int, region: np.ndarray, pis: np.ndarray | None = None) -> np.ndarray:
    """P_π(table ∈ region) for each π (default: the grid): Σ b₁(x₁; π) region[x₁, x₂] b₂(x₂; π)."""
    b1, b2 = (_grid_rows(n1), _grid_rows(n2)) if pis is None else (_binom_rows(n1, pis), _binom_rows(n2, pis))
    tail: np.ndarray = ((b1 @ region) * b2).sum(axis=1)
    return tail


def _sup_tail(n1: int, n2: int, region: np.ndarray) -> float:
    pis = _PIS
    tail = _tail(n1, n2, region)
    best = int(np.argmax(tail))
    # the tail is smooth in π, so its supremum lies between the best grid point's neighbours
    low, high = pis[max(best - 1, 0)], pis[min(best + 1, pis.size - 1)]
    from scipy import optimize  # only where a Boschloo region is computed (see the imports)

    refined = optimize.minimize_scalar(
        lambda p: -float(_tail(n1, n2, region, np.array([p]))[0]),
        bounds=(low, high),
        method="bounded",
        options={"xatol": 1e-10},
    )
    # a bounded search may settle below the grid point it started beside: keep the larger of the two
    return float(min(1.0, max(tail[best], -refined.fun)))


def _region(n1: int, n2: int, threshold: float) -> np.ndarray:
    region: np.ndarray = (fisher_grid(n1, n2) <= threshold * (1 + _TIE)).astype(float)
    return region


def midp(x1: int, n1: int, x2: int, n2: int) -> float:
    """Fisher's mid-p of one table, without building the grid (memory linear in n)."""
    total = x1 + x2
    k = np.arange(x1, min(n1, total) + 1)  # arm 1's successes at least as extreme as x₁, given the margins
    pmf = _hypergeom_pmf(k, n1, total - k, n2)
    return float(min(1.0, pmf[1:].sum() + 0.5 * pmf[0]))


@lru_cache(maxsize=4096)
def boschloo_table(x1: int, n1: int, x2: int, n2: int) -> float:
    """One-sided Boschloo p-value of one table (Fisher mid-p above BOSCHLOO_MAX_TABLES tables)."""
    if (n1 + 1) * (n2 + 1) > BOSCHLOO_MAX_TABLES:
        return midp(x1, n1, x2, n2)
    # the region is every table whose Fisher p is at most this table's: "at least as extreme"
    return _sup_tail(n1, n2, _region(n1, n2, float(fisher_grid(n1, n2)[x1, x2])))


@lru_cache(maxsize=64)
def boschloo_pvalues(n1: int, n2: int) -> np.ndarray:
    """One-sided Boschloo p-values for every table, shape (n1+1, n2+1), on the π grid (no refinement).

    Sorting all tables by their Fisher p once gives every table's tail probability as a cumulative sum.
    """
    if (n1 + 1) * (n2 + 1) > BOSCHLOO_MAX_TABLES:
        return midp_grid(n1, n2)
    fisher_p = fisher_grid(n1, n2).ravel()
    order = np.argsort(fisher_p, kind="stable")
    sorted_p = fisher_p[order]
    last = np.searchsorted(sorted_p, sorted_p * (1 + _TIE), side="right") - 1  # the last of each tie
    best = np.zeros(sorted_p.size)
    # π in chunks: the joint probabilities of every table at every π at once would take
    # 1,001 × (n₁+1)(n₂+1) floats, gigabytes at 500 runs an arm
    for chunk in np.array_split(np.linspace(0.0, 1.0, _NUISANCE_GRID), max(1, (n1 + n2) // 16)):
        b1, b2 = _binom_rows(n1, chunk), _binom_rows(n2, chunk)
        joint = (b1[:, :, None] * b2[:, None, :]).reshape(chunk.size, -1)[:, order]
        # a table's tail at π is the cumulative mass up to the last table tied with it
        best = np.maximum(best, np.cumsum(joint, axis=1)[:, last].max(axis=0))
    out = np.empty_like(best)
    out[order] = np.minimum(best, 1.0)
    return out.reshape(n1 + 1, n2 + 1)


def unpaired_pvalues(n1: int, n2: int, test: str = UNPAIRED.default) -> np.ndarray:
    """One-sided ("greater") p-values of the unpaired test for every table, shape (n1+1, n2+1)
    (`test`: a statistic's name in `evalkit.stats.registry.UNPAIRED`)."""
    return UNPAIRED.test(test).grid(n1, n2)
