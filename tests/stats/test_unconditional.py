"""The exact unconditional tests against a second implementation written differently: every
table's statistic in a dense matrix, the region at least as extreme as the observed table, its
probability summed with scipy's binomial (or multinomial) law, and the supremum taken by brute
force over a nuisance grid twenty times finer. Boschloo's test against scipy's `boschloo_exact`."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.stats.regions import PairStaircase, Staircase
from evalkit.stats.score import fm_z, tango_z
from evalkit.stats.unconditional import Table, exact_pvalue, rejection_region

FINE = 20001


def dense_fm(x1: int, n1: int, x2: int, n2: int, d: float) -> float:
    z = np.round(fm_z(np.arange(n1 + 1)[:, None], n1, np.arange(n2 + 1)[None, :], n2, d), 9)
    region = (z >= z[x1, x2]).astype(float)
    best = 0.0
    for t in np.linspace(max(0.0, d), min(1.0, 1.0 + d), FINE):
        p = sps.binom.pmf(np.arange(n1 + 1), n1, t) @ region @ sps.binom.pmf(np.arange(n2 + 1), n2, t - d)
        best = max(best, float(p))
    return best


def dense_tango(b: int, c: int, n: int, d: float, points: int = 4001) -> float:
    bb, cc = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    ok = bb + cc <= n
    z = np.round(np.where(ok, tango_z(np.where(ok, bb, 0), np.where(ok, cc, 0), n, d), -np.inf), 9)
    region = (z >= z[b, c]) & ok
    counts = np.stack([np.broadcast_to(bb, ok.shape), np.broadcast_to(cc, ok.shape), np.where(ok, n - bb - cc, 0)], -1)
    best = 0.0
    for t in np.linspace(max(0.0, -d), (1 - d) / 2, points):
        probs = sps.multinomial.pmf(counts, n, [t + d, t, 1 - 2 * t - d])
        best = max(best, float((probs * region).sum()))
    return best


@pytest.mark.parametrize(
    ("x1", "n1", "x2", "n2", "d"),
    [
        (25, 25, 20, 25, 0.05),
        (24, 25, 22, 25, 0.1),
        (40, 50, 30, 45, 0.05),
        (10, 30, 2, 30, 0.2),
        (18, 20, 20, 20, -0.1),
    ],
)
def test_chans_exact_test_against_a_dense_brute_force(x1: int, n1: int, x2: int, n2: int, d: float) -> None:
    assert exact_pvalue("fm", Table(x1, n1, x2, n2), d) == pytest.approx(dense_fm(x1, n1, x2, n2, d), rel=1e-6)


@pytest.mark.parametrize(("b", "c", "n", "d"), [(5, 1, 25, 0.05), (8, 2, 40, 0.1), (3, 0, 20, 0.0), (1, 6, 30, -0.05)])
def test_the_exact_tango_test_against_a_dense_brute_force(b: int, c: int, n: int, d: float) -> None:
    assert exact_pvalue("tango", Table(b, n, c, n), d) == pytest.approx(dense_tango(b, c, n, d), rel=1e-6)


@pytest.mark.parametrize("table", [(25, 25, 20, 25), (20, 25, 12, 25), (9, 10, 3, 12), (15, 30, 5, 20)])
def test_the_fisher_ordering_at_zero_is_boschloo_as_scipy_computes_it(table: tuple[int, int, int, int]) -> None:
    x1, n1, x2, n2 = table
    reference = sps.boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="greater", n=64).pvalue
    assert exact_pvalue("fisher", Table(*table), 0.0) == pytest.approx(reference, rel=1e-8)


def test_the_mcnemar_ordering_at_zero_never_exceeds_the_conditional_test() -> None:
    """Unconditional over the trinomial, ordered by McNemar's conditional p: never above it (the
    conditional test is valid at every nuisance value), so an interval built on it agrees with it."""
    for b in range(0, 12):
        for c in range(0, 12 - b):
            conditional = sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue if b + c else 1.0
            assert exact_pvalue("mcnemar", Table(b, 30, c, 30), 0.0) <= conditional + 1e-12


@pytest.mark.parametrize(
    ("order", "n", "d", "alpha"),
    [
        ("fm", 20, 0.05, 0.05),
        ("fm", 25, 0.1, 0.05 / 6),
        ("fisher", 18, 0.0, 0.05),
        ("tango", 20, 0.05, 0.05),
        ("mcnemar", 20, 0.0, 0.01),
        ("tango", 24, 0.2, 0.05 / 6),
    ],
)
def test_a_region_holds_exactly_the_tables_whose_p_is_at_most_alpha(order: str, n: int, d: float, alpha: float) -> None:
    region = rejection_region(order, n, n, d, alpha)  # type: ignore[arg-type]
    paired = order in ("tango", "mcnemar")
    for x1 in range(n + 1):
        for x2 in range(n + 1 - x1 if paired else n + 1):
            rejected = exact_pvalue(order, Table(x1, n, x2, n), d) <= alpha  # type: ignore[arg-type]
            assert rejected == region.contains(x1, x2), (x1, x2)


@pytest.mark.parametrize(("n", "d", "alpha"), [(15, 0.05, 0.05), (30, 0.1, 0.01), (40, 0.02, 0.05)])
def test_a_region_keeps_its_size_on_a_fine_grid_with_scipy(n: int, d: float, alpha: float) -> None:
    region = rejection_region("fm", n, n, d, alpha)
    assert isinstance(region, Staircase)
    dense = (np.arange(n + 1)[None, :] <= region.limit[:, None]).astype(float)
    for t in np.linspace(d, 1.0, 4001):
        size = sps.binom.pmf(np.arange(n + 1), n, t) @ dense @ sps.binom.pmf(np.arange(n + 1), n, t - d)
        assert size <= alpha * (1 + 1e-9)
    paired = rejection_region("tango", n, n, d, alpha)
    assert isinstance(paired, PairStaircase)
    for t in np.linspace(0.0, (1 - d) / 2, 401):
        assert paired.probability(t + d, t)[0] <= alpha * (1 + 1e-9)


def test_staircase_probabilities_against_scipy_at_small_and_large_n() -> None:
    """Dense sums with scipy's laws, including sizes where rows are skipped outside a window."""
    rng = np.random.default_rng(1)
    for n1, n2 in [(10, 12), (25, 25), (60, 40), (1500, 1400)]:
        limit = np.maximum.accumulate(rng.integers(-1, n2 + 1, n1 + 1))
        region = Staircase(n1, n2, limit)
        cdf2 = {p: sps.binom.cdf(np.arange(-1, n2 + 1), n2, p) for p in (0.7, 0.5, 0.01, 0.3)}
        for pb, pc in [(0.9, 0.7), (0.5, 0.5), (0.99, 0.01), (0.0, 0.3)]:
            dense = float(sps.binom.pmf(np.arange(n1 + 1), n1, pb) @ cdf2[pc][limit + 1])
            assert region.probability(pb, pc)[0] == pytest.approx(dense, abs=1e-12)
    for n in [10, 30, 80]:
        d = np.arange(n + 1)
        need = np.minimum.accumulate(np.maximum.accumulate(rng.integers(0, n + 2, n + 1)).clip(0, d + 1) - d) + d
        pairs = PairStaircase(n, need)
        for pl, pg in [(0.2, 0.05), (0.1, 0.1), (0.5, 0.0), (0.0, 0.3)]:
            dense = sum(
                sps.multinomial.pmf([b, c, n - b - c], n, [pl, pg, 1 - pl - pg])
                for b in range(n + 1)
                for c in range(n + 1 - b)
                if b >= need[b + c]
            )
            many = pairs.probability(np.full(20, pl), np.full(20, pg))  # the recursion (more than a few)
            assert pairs.probability(pl, pg)[0] == pytest.approx(dense, abs=1e-12)
            assert many == pytest.approx(np.full(20, dense), abs=1e-12)
