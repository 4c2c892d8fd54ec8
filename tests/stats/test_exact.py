"""The gate's exact 2×2 tests against scipy: Boschloo per table and its rejection regions, Fisher and
mid-p grids, exact power (unpaired and McNemar) by brute-force enumeration, the large-n fallback."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evalkit.stats import exact as se
from evalkit.stats import pvalues, sample_size
from evalkit.stats.unconditional import rejection_region


def scipy_boschloo(x1: int, n1: int, x2: int, n2: int) -> float:
    return float(sps.boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="greater").pvalue)


@pytest.mark.parametrize(("n1", "n2"), [(6, 6), (9, 7), (5, 12)])
def test_boschloo_matches_scipy_on_every_table(n1: int, n2: int) -> None:
    for x1, x2 in itertools.product(range(n1 + 1), range(n2 + 1)):
        if 0 < x1 + x2 < n1 + n2:
            assert pvalues.boschloo(x1, n1, x2, n2) == pytest.approx(
                scipy_boschloo(x1, n1, x2, n2), rel=1e-6, abs=1e-12
            )
            assert pvalues.boschloo(x1, n1, x2, n2, "less") == pytest.approx(
                float(sps.boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="less").pvalue), rel=1e-6
            )


def test_the_grid_and_the_rejection_region_agree_with_the_per_table_p() -> None:
    grid = se.boschloo_pvalues(20, 15)
    for alpha in (0.05, 0.01, 0.001):
        region = rejection_region("fisher", 20, 15, 0.0, alpha)  # the gate's Boschloo region
        for x1, x2 in itertools.product(range(21), range(16)):
            p = pvalues.boschloo(x1, 20, x2, 15)
            assert grid[x1, x2] == pytest.approx(p, rel=1e-5, abs=1e-9)
            if abs(p - alpha) > 1e-9:
                assert region.contains(x1, x2) == (p <= alpha), (x1, x2, alpha)


@pytest.mark.parametrize(("n1", "n2"), [(25, 25), (40, 13)])
def test_fisher_and_mid_p_grids_match_scipy(n1: int, n2: int) -> None:
    for x1, x2 in itertools.product(range(n1 + 1), range(n2 + 1)):
        table = [[x1, x2], [n1 - x1, n2 - x2]]
        assert se.fisher_grid(n1, n2)[x1, x2] == pytest.approx(
            sps.fisher_exact(table, alternative="greater").pvalue, rel=1e-9, abs=1e-15
        )
        dist = sps.hypergeom(n1 + n2, x1 + x2, n1)
        assert se.midp_grid(n1, n2)[x1, x2] == pytest.approx(dist.sf(x1) + dist.pmf(x1) / 2, rel=1e-9, abs=1e-15)


def test_unpaired_power_by_enumerating_scipys_boschloo() -> None:
    n, p_base, p_cand = 10, 0.9, 0.5
    power = sum(
        sps.binom.pmf(a, n, p_base) * sps.binom.pmf(b, n, p_cand)
        for a, b in itertools.product(range(n + 1), repeat=2)
        if 0 < a + b < 2 * n and scipy_boschloo(a, n, b, n) <= 0.05
    )
    achieved, exact = sample_size.two_sample_power(n, p_base, p_cand)
    assert exact and achieved == pytest.approx(power, rel=1e-9)


@pytest.mark.parametrize(("p_base", "p_cand"), [(1.0, 0.8), (0.9, 0.7), (0.8, 0.8)])
def test_mcnemar_power_by_enumerating_the_multinomial(p_base: float, p_cand: float) -> None:
    n = 12
    lost, gained = p_base * (1 - p_cand), (1 - p_base) * p_cand
    power = sum(
        sps.multinomial.pmf([b, c, n - b - c], n, [lost, gained, 1 - lost - gained])
        for b in range(n + 1)
        for c in range(n + 1 - b)
        if b + c and sps.binomtest(b, b + c, 0.5, alternative="greater").pvalue <= 0.05
    )
    assert sample_size.mcnemar_power(n, p_base, p_cand) == pytest.approx(power, abs=1e-12)


def test_mcnemar_power_is_the_issue_figure_where_boschloo_would_say_more() -> None:
    """with paired runs the gate uses McNemar; at 1.0 → 0.8 and N = 25 that is 0.579, not 0.766."""
    assert sample_size.mcnemar_power(25, 1.0, 0.8) == pytest.approx(0.579, abs=5e-4)
    assert sample_size.two_sample_power(25, 1.0, 0.8)[0] == pytest.approx(0.766, abs=5e-4)


def test_above_the_size_limit_mid_p_stands_in_within_the_stated_tolerance() -> None:
    """At the switch (500 runs per arm) mid-p is within 20% (relative) of Boschloo's p over p in [1e-4, 0.1]."""
    n = 500
    assert (n + 1) ** 2 <= se.BOSCHLOO_MAX_TABLES < (n + 2) ** 2
    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(200):
        x1, x2 = int(rng.integers(n // 2, n + 1)), int(rng.integers(n // 4, n + 1))
        exact = pvalues.boschloo(x1, n, x2, n)
        if 1e-4 <= exact <= 0.1:
            checked += 1
            assert abs(se.midp_grid(n, n)[x1, x2] - exact) <= 0.2 * exact
    assert checked >= 5
    assert pvalues.boschloo(480, 501, 470, 501) == pytest.approx(float(se.midp_grid(501, 501)[480, 470]), rel=1e-9)
    assert pvalues.boschloo(6500, 6800, 6400, 6800) == pytest.approx(se.midp(6500, 6800, 6400, 6800))  # no grid


# --- the binomial without scipy.stats (a report and the gate do not import it) ------------------

# scipy.stats' own binomial raises OverflowError below about p = 1e-307 (boost's ibeta_derivative), and
# below about 1e-250 either side may lose its digits (60,000 samples agree above 1e-200): no test decides there
TINY = 1e-200


@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 3000), k=st.integers(-2, 3002), p=st.floats(1e-300, 1.0) | st.sampled_from([0.0, 0.5, 1.0]))
def test_the_binomial_matches_scipy_stats(n: int, k: int, p: float) -> None:
    assert se.binom_sf(k, n, p) == pytest.approx(sps.binom.sf(k, n, p), rel=1e-10, abs=TINY)
    assert se.binom_cdf(k, n, p) == pytest.approx(sps.binom.cdf(k, n, p), rel=1e-10, abs=TINY)
    if 0 <= k <= n:
        assert se.binom_pmf(k, n, p) == pytest.approx(sps.binom.pmf(k, n, p), rel=1e-11, abs=TINY)


def test_the_binomial_where_scipy_stats_overflows() -> None:
    """The input that found scipy.stats' overflow: P(X = 1) for Binom(2, p) is 2p(1 − p)."""
    p = 1.1125369292536007e-308
    assert se.binom_pmf(1, 2, p) == pytest.approx(2 * p, rel=1e-12)
    assert se.binom_cdf(0, 2, p) == pytest.approx(1.0) and se.binom_sf(0, 2, p) == pytest.approx(2 * p, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(b=st.integers(0, 600), c=st.integers(0, 600), alternative=st.sampled_from(["greater", "less", "two-sided"]))
def test_mcnemar_is_scipys_exact_binomial_test(b: int, c: int, alternative: str) -> None:
    expected = 1.0 if b + c == 0 else sps.binomtest(b, b + c, 0.5, alternative=alternative).pvalue
    assert pvalues.mcnemar(b, c, alternative) == pytest.approx(expected, rel=1e-10, abs=TINY)  # type: ignore[arg-type]


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.5, 0.0625, 0.25])
def test_mcnemar_critical_values_are_exact_even_where_a_tail_equals_alpha(alpha: float) -> None:
    """Tails of Binom(d, ½) are multiples of 2⁻ᵈ: at α = ½ (d = 35, b = 18) scipy's isf route gave 19,
    one above the least b whose tail is at most α, computed here in exact fractions."""
    critical = pvalues.mcnemar_critical(80, alpha)
    for d in range(1, 81):
        tails = [Fraction(sum(math.comb(d, k) for k in range(b, d + 1)), 2**d) for b in range(d + 1)]
        expected = next((b for b, tail in enumerate(tails) if tail <= Fraction(alpha)), d + 1)
        assert critical[d - 1] == expected, (d, alpha)


@pytest.mark.parametrize(("n1", "n2"), [(6, 6), (9, 7)])
def test_two_sided_boschloo_is_scipys_definition(n1: int, n2: int) -> None:
    """Twice the smaller one-sided p-value (scipy's `boschloo_exact`, whose cost is about n^2.7)."""
    for x1, x2 in itertools.product(range(n1 + 1), range(n2 + 1)):
        if 0 < x1 + x2 < n1 + n2:
            expected = sps.boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="two-sided").pvalue
            assert pvalues.boschloo(x1, n1, x2, n2, "two-sided") == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_two_sided_boschloo_on_pooled_cells_of_thousands_of_runs() -> None:
    """Regression: a report on unpaired runs compared pooled cells with scipy's two-sided Boschloo
    (13.6 s at 800 runs a side, hours at the default matrix's 6,800); above BOSCHLOO_MAX_TABLES it is
    Fisher's mid-p, twice the smaller side, as the gate's one-sided test."""
    p = pvalues.boschloo(5000, 6800, 4700, 6800, "two-sided")
    assert p == pytest.approx(2 * se.midp(5000, 6800, 4700, 6800), rel=1e-12)
    assert pvalues.boschloo(4700, 6800, 5000, 6800, "two-sided") == p


@settings(max_examples=200, deadline=None)
@given(n1=st.integers(1, 900), n2=st.integers(1, 900), data=st.data())
def test_mid_p_matches_scipys_hypergeometric(n1: int, n2: int, data: st.DataObject) -> None:
    x1, x2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    dist = sps.hypergeom(n1 + n2, x1 + x2, n1)
    assert se.midp(x1, n1, x2, n2) == pytest.approx(min(1.0, dist.sf(x1) + dist.pmf(x1) / 2), rel=1e-9, abs=TINY)
