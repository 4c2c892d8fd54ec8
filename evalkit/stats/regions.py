"""Rejection regions of the gate's one-sided tests, held in memory proportional to the runs, never
to their square, and their probabilities under any true rates.

Every test the gate runs rejects a set of outcome tables that is monotone ("Barnard convex"): more
baseline passes or fewer candidate passes never turn a rejection into an acceptance. Such a set is
a staircase, one number per row:

- unpaired (x₁ of n₁ baseline passes, x₂ of n₂ candidate passes): reject when x₂ ≤ `limit[x₁]`,
  `limit` non-decreasing (−1: nothing rejected in that row);
- paired (n pairs, of which `lost` passed on the baseline only and `gained` on the candidate
  only): reject when lost ≥ `need[lost + gained]`, with `need` non-decreasing and rising by at most
  one per discordant pair (d + 1: nothing rejected with d discordant pairs).

A probability is then one sum over rows: Σ P(x₁) P(X₂ ≤ limit[x₁]) unpaired, and over the
number of discordant pairs d, Σ P(d) P(Bin(d, θ) ≥ need[d]) paired (θ = p_lost / (p_lost +
p_gained)). Rows whose probability is below about 10⁻¹⁷ are skipped (a window of 9 standard
deviations and 15 runs around the mean), so the cost per evaluation grows like √N at large N.

Monotone regions have their largest probability over a composite null on its boundary (Röhmel &
Mansmann 1999, Biometrical Journal 41:149–170), so an exact unconditional p-value is a supremum
over one nuisance rate: `supremum` takes it on a grid of 1,001 points, refined around the best one
by a bounded scalar search (the method scipy's and evalkit's Boschloo tests use).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["NUISANCE_GRID", "PairStaircase", "Staircase", "binomial_pmf", "boundary_size", "supremum"]

NUISANCE_GRID = 1001
_FEW = 8  # rate pairs evaluated one by one (the refining search); more share one recursion
_ENTRIES = 1 << 17  # matrix entries per chunk of parameter values (memory per evaluation ~ 1 MB)


@lru_cache(maxsize=64)
def _log_comb(n: int) -> np.ndarray:
    k = np.arange(n + 1, dtype=float)
    out: np.ndarray = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return out


def binomial_pmf(k: np.ndarray, n: int, p: np.ndarray) -> np.ndarray:
    """P(X = k), X ~ Binomial(n, p), broadcasting k (integers in [0, n]) against p."""
    k = np.asarray(k)
    out: np.ndarray = np.exp(_log_comb(n)[k] + special.xlogy(k, p) + special.xlog1py(n - k, -np.asarray(p)))
    return out


def _window(n: int, p: np.ndarray) -> tuple[int, int]:
    """The counts [low, high] outside which Binomial(n, p) has negligible mass, for every p given."""
    sd = np.sqrt(n * p * (1 - p))
    low = int(np.floor(np.min(n * p - 9 * sd))) - 15
    high = int(np.ceil(np.max(n * p + 9 * sd))) + 15
    return max(0, low), min(n, high)


def _chunks(p: np.ndarray, n: int) -> list[slice]:
    """Runs of the (sorted) rates whose means n·p lie within 3√n of each other, so that their
    windows overlap, and no more than a chunk's worth of entries."""
    width = min(n + 1, int(18 * np.sqrt(n / 4)) + 64)  # about a window's width at n runs
    size, span = max(1, _ENTRIES // width), 3 * np.sqrt(n) + 1
    out, start = [], 0
    while start < p.size:
        stop = min(p.size, start + size, int(np.searchsorted(p, p[start] + span / n, side="right")))
        out.append(slice(start, max(stop, start + 1)))
        start = out[-1].stop
    return out


@dataclass(frozen=True, eq=False)
class Staircase:
    """Unpaired: reject (x₁, x₂) when x₂ ≤ limit[x₁]."""

    n_base: int
    n_cand: int
    limit: np.ndarray  # int, length n_base + 1, non-decreasing, in [−1, n_cand]

    def contains(self, x_base: int, x_cand: int) -> bool:
        return bool(x_cand <= self.limit[x_base])

    def intersect(self, other: Staircase) -> Staircase:
        # rejected by both: the lower of the two limits in every row (still non-decreasing)
        return Staircase(self.n_base, self.n_cand, np.minimum(self.limit, other.limit))

    def probability(self, p_base: np.ndarray | float, p_cand: np.ndarray | float) -> np.ndarray:
        """P(table in the region) for each pair of true rates (arrays of one shape, or scalars)."""
        pb, pc = (np.atleast_1d(np.asarray(v, dtype=float)) for v in np.broadcast_arrays(p_base, p_cand))
        out = np.empty(pb.size)
        order = np.argsort(pb, kind="stable")  # neighbouring rates share a window
        for part in _chunks(pb[order], max(self.n_base, self.n_cand)):
            rows = order[part]
            out[rows] = self._chunk(pb[rows], pc[rows])
        return out.reshape(np.shape(pb))

    def _chunk(self, pb: np.ndarray, pc: np.ndarray) -> np.ndarray:
        low1, high1 = _window(self.n_base, pb)
        x1 = np.arange(low1, high1 + 1)
        f1 = binomial_pmf(x1[None, :], self.n_base, pb[:, None])
        low2, high2 = _window(self.n_cand, pc)
        x2 = np.arange(low2, high2 + 1)
        # P(X₂ ≤ t) = P(X₂ ≤ low2 − 1) + the pmf summed from low2 to t (t clipped into the window)
        below = special.bdtr(low2 - 1, self.n_cand, pc) if low2 > 0 else np.zeros_like(pc)
        cdf = np.concatenate(
            (below[:, None], below[:, None] + np.cumsum(binomial_pmf(x2[None, :], self.n_cand, pc[:, None]), axis=1)),
            axis=1,
        )
        t = np.clip(self.limit[x1], low2 - 1, high2) - (low2 - 1)  # column 0: below the window
        # a row whose limit is −1 rejects nothing: probability 0, whatever the window's column 0 says
        c2 = np.where(self.limit[x1] < 0, 0.0, np.take_along_axis(cdf, np.broadcast_to(t, f1.shape), axis=1))
        result: np.ndarray = np.minimum(1.0, (f1 * c2).sum(axis=1))
        return result


@dataclass(frozen=True, eq=False)
class PairStaircase:
    """Paired: of n pairs, reject (lost, gained) when lost ≥ need[lost + gained]."""

    n: int
    need: np.ndarray  # int, length n + 1, need[d] in [0, d + 1]

    def contains(self, lost: int, gained: int) -> bool:
        return bool(lost >= self.need[lost + gained])

    def intersect(self, other: PairStaircase) -> PairStaircase:
        # rejected by both: the larger of the two needs for every number of discordant pairs
        return PairStaircase(self.n, np.maximum(self.need, other.need))

    def probability(self, p_lost: np.ndarray | float, p_gained: np.ndarray | float) -> np.ndarray:
        """P(reject) for pairs whose outcomes are lost, gained or tied with these probabilities."""
        pl, pg = (np.atleast_1d(np.asarray(v, dtype=float)) for v in np.broadcast_arrays(p_lost, p_gained))
        out = np.empty(pl.size)
        discordant = pl + pg
        # θ: the share of discordant pairs that are lost; with no discordant pair it is never read
        theta = np.divide(pl, discordant, out=np.zeros_like(pl), where=discordant > 0)
        # a few rates (the refining search) are cheaper one by one than through the shared recursion
        if pl.size <= _FEW:
            for i in range(pl.size):
                out[i] = self._direct(theta[i], discordant[i])
        else:
            out[:] = self._chunk(theta, discordant)  # one pass over d serves every row
        return np.minimum(1.0, out).reshape(np.shape(pl))

    def _direct(self, theta: float, discordant: float) -> float:
        """One pair of rates: a regularised beta per number of discordant pairs in the window."""
        low, high = _window(self.n, np.array([discordant]))
        d = np.arange(low, high + 1)
        need = self.need[d]
        # need 0: every outcome rejects; need beyond d: none can
        tail = np.where(need <= 0, 1.0, np.where(need > d, 0.0, special.bdtrc(need - 1, d, theta)))
        return float(binomial_pmf(d, self.n, np.array(discordant)) @ tail)

    def _chunk(self, theta: np.ndarray, discordant: np.ndarray) -> np.ndarray:
        """Σ_d P(D = d) P(Bin(d, θ) ≥ need[d]) over the window of d, the tails carried from one d to
        the next by the binomial recursions (ten times cheaper than a regularised beta per term)."""
        low, high = _window(self.n, discordant)
        total = np.zeros(theta.size)
        sure = (theta <= 1e-12) | (theta >= 1 - 1e-12)  # all discordant pairs on one side: the tail is 0 or 1
        # the recursion divides by θ and 1 − θ: run it at ½ where the answer is known anyway (`exact`)
        inner = np.where(sure, 0.5, theta)
        q = 1 - inner
        k = int(self.need[low])
        tail = special.bdtrc(k - 1, low, inner) if 0 < k <= low else np.full(theta.size, float(k <= 0))
        at = _pmf_at(low, k, inner)  # P(Bin(d, θ) = k)
        below = _pmf_at(low, k - 1, inner)  # P(Bin(d, θ) = k − 1)
        for d in range(low, high + 1):
            weight = np.exp(
                _log_comb(self.n)[d] + special.xlogy(d, discordant) + special.xlog1py(self.n - d, -discordant)
            )
            exact = np.where(theta >= 0.5, float(k <= d), float(k <= 0))
            total += weight * np.where(sure, exact, np.clip(tail, 0.0, 1.0))
            if d == high:
                break
            # from d to d + 1 pairs: P(Bin(d+1) ≥ k) = P(Bin(d) ≥ k) + θ P(Bin(d) = k − 1), and the two
            # point masses by the same recursion
            further = below * (k - 1) * q / ((d - k + 2) * inner) if k >= 2 else np.zeros_like(inner)
            tail, at, below = tail + inner * below, inner * below + q * at, inner * further + q * below
            if self.need[d + 1] > k:  # one more lost pair needed: step the tail up by one count
                tail, below, at = tail - at, at, at * (d + 1 - k) * inner / ((k + 1) * q)
                k += 1
        return total


def _pmf_at(d: int, k: int, theta: np.ndarray) -> np.ndarray:
    if not 0 <= k <= d:
        return np.zeros_like(theta)
    return binomial_pmf(np.array(k), d, theta)


_CLEAR = 1e-3  # relative distance from a level at which the grid's best point already decides


def supremum(
    probability: Callable[[np.ndarray], np.ndarray],
    low: float,
    high: float,
    values: np.ndarray | None = None,
    level: float | None = None,
) -> float:
    """The largest value of `probability` (vectorised over a nuisance rate) on [low, high]: the best of
    NUISANCE_GRID points (`values`, when the caller has them from a faster path), then a bounded
    scalar search between the best point's neighbours. `level`: the caller only compares the result
    with it, so the search is skipped when the grid's best is above it (a lower bound of the
    supremum decides) or clearly below it (the search moves it by far less)."""
    # a boundary of one point (δ at ±1): nothing to search
    if high <= low:
        return float(probability(np.array([low]))[0])
    grid = np.linspace(low, high, NUISANCE_GRID)
    values = probability(grid) if values is None else values
    best = int(np.argmax(values))
    # above the level the grid's best already rejects; clearly below it the search cannot reach it
    if level is not None and not level * (1 - _CLEAR) <= values[best] <= level:
        return float(min(1.0, values[best]))
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
    from scipy import optimize  # only where an exact unconditional p-value is computed

    def negative(t: float) -> float:
        return -float(probability(np.array([t]))[0])

    refined = optimize.minimize_scalar(negative, bounds=(left, right), method="bounded", options={"xatol": 1e-10})
    return float(min(1.0, max(values[best], -refined.fun)))


_CACHED_GRID = 1000  # runs a side up to which the boundary's binomial laws are kept between evaluations


def _boundary_laws(n1: int, n2: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    return (_small_laws if max(n1, n2) <= 100 else _large_laws)(n1, n2, delta)


def _laws(n1: int, n2: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """On the grid of the boundary p₁ − p₂ = δ: P(X₁ = x₁) for every x₁, and P(X₂ ≤ t) for t = −1..n₂
    (column 0 is t = −1). A region's probability at every grid point is then one gather and one
    product; a test's critical value needs it for twenty regions."""
    # p₁ over the rates where both p₁ and p₂ = p₁ − δ are probabilities
    grid = np.linspace(max(0.0, delta), min(1.0, 1.0 + delta), NUISANCE_GRID)
    f1 = binomial_pmf(np.arange(n1 + 1)[None, :], n1, grid[:, None])
    f2 = binomial_pmf(np.arange(n2 + 1)[None, :], n2, np.clip(grid - delta, 0.0, 1.0)[:, None])
    cdf = np.concatenate((np.zeros((grid.size, 1)), np.minimum(1.0, np.cumsum(f2, axis=1))), axis=1)
    return f1, cdf


_small_laws = lru_cache(maxsize=128)(_laws)  # ≤ 1.6 MB each
_large_laws = lru_cache(maxsize=4)(_laws)  # ≤ 16 MB each


def boundary_size(region: Staircase | PairStaircase, delta: float, *, level: float | None = None) -> float:
    """The region's largest probability on the boundary p₁ − p₂ = δ of the null p₁ − p₂ ≤ δ (the
    exact unconditional test's p-value, or its size). `level`: the caller only compares the result
    with it (`supremum`); a coarse grid above it decides at once."""
    values = None
    if isinstance(region, Staircase):
        low, high = max(0.0, delta), min(1.0, 1.0 + delta)

        def at(t: np.ndarray) -> np.ndarray:
            return region.probability(t, t - delta)

        if max(region.n_base, region.n_cand) <= _CACHED_GRID:
            f1, cdf = _boundary_laws(region.n_base, region.n_cand, round(delta, 12))
            values = np.minimum(1.0, (f1 * cdf[:, region.limit + 1]).sum(axis=1))
    else:
        # p_gained = t, p_lost = t + δ: both ≥ 0 and together at most 1
        low, high = max(0.0, -delta), (1.0 - delta) / 2

        def at(t: np.ndarray) -> np.ndarray:
            return region.probability(t + delta, t)

    if values is None and level is not None and high > low:
        coarse = at(np.linspace(low, high, (NUISANCE_GRID - 1) // 10 + 1))  # every tenth point of the grid
        if coarse.max() > level:
            return float(coarse.max())
    return supremum(at, low, high, values, level)
