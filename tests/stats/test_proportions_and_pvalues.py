"""Every interval, test, power and sample size the report and the gate print, held to an independent
reference: scipy's own implementation where it has one (Boschloo, Fisher, the bootstrap, the
binomial), exact enumeration where it does not, and a table of reference values at N = 25 computed
once with scipy 1.17 (the numbers a reader of the README checks first). A disagreement is either a
bug here or a difference of definition, and the comment beside the value says which."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import boschloo_exact

from evalkit.stats import averages, proportions, pvalues, sample_size, wald
from evalkit.stats.exact import boschloo_pvalues


def approx(value: float, abs: float = 0.0015) -> object:
    return pytest.approx(value, abs=abs)


@pytest.mark.parametrize(
    ("x", "wilson", "cp"),
    [
        (25, (0.867, 1.0), (0.863, 1.0)),
        (24, (0.805, 0.993), (0.797, 0.999)),
        (20, (0.609, 0.911), (0.593, 0.932)),
        (0, (0.0, 0.133), (0.0, 0.137)),
    ],
)
def test_one_proportion_intervals_match_the_reference_table(
    x: int, wilson: tuple[float, float], cp: tuple[float, float]
) -> None:
    w, c = proportions.wilson(x, 25), proportions.clopper_pearson(x, 25)
    assert (w.low, w.high) == (approx(wilson[0]), approx(wilson[1]))
    assert (c.low, c.high) == (approx(cp[0]), approx(cp[1]))
    assert proportions.proportion_interval(x, 25, method="clopper-pearson") == c


def test_boundary_formulas_are_exact() -> None:
    z2 = 1.959964**2
    assert proportions.wilson(25, 25).low == pytest.approx(25 / (25 + z2), abs=1e-6)
    assert proportions.wilson(25, 25).high == 1.0 and proportions.wilson(0, 25).low == 0.0
    assert proportions.clopper_pearson(25, 25).low == pytest.approx(0.025 ** (1 / 25))
    # rule of three: the exact one-sided upper bound on failures after 0 of 25
    assert approx(0.113) == 1 - 0.05 ** (1 / 25)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        proportions.wilson(3, 2)
    with pytest.raises(ValueError):
        proportions.wilson(0, 0)


def test_newcombe_hybrid_score_interval() -> None:
    d = proportions.newcombe(25, 25, 20, 25)
    assert d.estimate == pytest.approx(0.2)
    assert (d.low, d.high) == (approx(0.026), approx(0.391))


def test_fisher_one_and_two_sided() -> None:
    assert pvalues.fisher(25, 25, 20, 25) == approx(0.025)
    assert pvalues.fisher(25, 25, 20, 25, alternative="two-sided") == approx(0.050)
    assert pvalues.fisher(25, 25, 21, 25) == approx(0.055)


def test_boschloo_one_binomial_arm_per_column() -> None:
    # A reference table listed 0.011 (and 0.025 for 21/25): that is scipy on the *transposed* table, which
    # treats "passed"/"failed" as the two samples. scipy wants one arm per column ("each column
    # stores the binomial experiment"); with that orientation the p-values are 0.0164 and 0.0325,
    # and the table's own power figures (0.77 at N=25, N=27 for 80%) come out as listed below.
    assert pvalues.boschloo(25, 25, 20, 25) == approx(0.0164, abs=2e-4)
    assert pvalues.boschloo(25, 25, 21, 25) == approx(0.0325, abs=2e-4)
    assert boschloo_exact([[25, 0], [20, 5]], alternative="greater").pvalue == approx(0.011)
    assert pvalues.boschloo(25, 25, 20, 25) < pvalues.fisher(25, 25, 20, 25)


def test_boschloo_without_information_is_one() -> None:
    assert pvalues.boschloo(25, 25, 25, 25) == 1.0
    assert pvalues.boschloo(0, 10, 0, 10) == 1.0


def test_boschloo_grid_agrees_with_scipy() -> None:
    grid = boschloo_pvalues(25, 25)
    for x1, x2 in [(25, 20), (25, 21), (23, 15), (20, 18), (12, 3)]:
        assert grid[x1, x2] == pytest.approx(pvalues.boschloo(x1, 25, x2, 25), abs=1e-5)


def test_mcnemar_exact_on_discordant_pairs() -> None:
    assert pvalues.mcnemar(5, 0) == pytest.approx(0.5**5)
    assert pvalues.mcnemar(0, 0) == 1.0
    assert pvalues.mcnemar(4, 0) > 0.05  # baseline always passed: 4 lost runs are not enough
    assert pvalues.mcnemar(3, 7, alternative="two-sided") == pytest.approx(0.34375)


def test_holm_step_down() -> None:
    assert pvalues.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert pvalues.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert pvalues.holm([]) == []


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0, 0, 1, 3, 0, 2, 0, 0, 1, 4]
    a = averages.bootstrap_mean(values, np.random.default_rng(7))
    b = averages.bootstrap_mean(values, np.random.default_rng(7))
    assert a == b
    assert a.low < float(np.mean(values)) < a.high
    assert averages.bootstrap_mean([2, 2, 2], np.random.default_rng(0)) == proportions.Interval(2.0, 2.0)
    with pytest.raises(ValueError):
        averages.bootstrap_mean([], np.random.default_rng(0))


def test_bootstrap_by_value_counts_agrees_with_scipy_resampling_runs() -> None:
    """Drawing counts of the distinct values is the same bootstrap as scipy's resampling of indices."""
    from scipy.stats import bootstrap

    values = np.random.default_rng(3).choice([0, 1, 2, 5], size=400, p=[0.6, 0.25, 0.1, 0.05])
    ours = averages.bootstrap_mean(values, np.random.default_rng(4), resamples=20000)
    theirs = bootstrap(
        (values,), np.mean, n_resamples=20000, method="percentile", rng=np.random.default_rng(5)
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.02) and ours.high == pytest.approx(theirs.high, abs=0.02)


def _mcnemar_power_by_enumeration(n: int, p_base: float, p_cand: float, alpha: float) -> float:
    """Every discordant count d, every split of it: the definition, one table at a time."""
    from scipy.stats import binom

    lost, gained = p_base * (1 - p_cand), (1 - p_base) * p_cand
    total = 0.0
    for d in range(1, n + 1):
        for b in range(d + 1):
            if binom.sf(b - 1, d, 0.5) <= alpha:
                total += binom.pmf(d, n, lost + gained) * binom.pmf(b, d, lost / (lost + gained))
    return total


@pytest.mark.parametrize("n", [1, 7, 25, 60])
def test_mcnemar_power_matches_enumerating_the_tables(n: int) -> None:
    for p_base, p_cand in [(1.0, 0.8), (0.95, 0.7), (0.9, 0.3), (0.6, 0.55)]:
        for alpha in (0.01, 0.05, 0.2):
            assert sample_size.mcnemar_power(n, p_base, p_cand, alpha=alpha) == pytest.approx(
                _mcnemar_power_by_enumeration(n, p_base, p_cand, alpha), abs=1e-12
            )


def test_pass_hat_k_tau_bench() -> None:
    counts = [(25, 25), (20, 25)]
    assert averages.pass_hat_k(counts, 1) == pytest.approx(0.9)
    assert averages.pass_hat_k(counts, 2) == pytest.approx((1 + math.comb(20, 2) / math.comb(25, 2)) / 2)
    values = [averages.pass_hat_k(counts, k) for k in range(1, 6)]
    assert values == sorted(values, reverse=True)
    assert averages.pass_hat_k([(1, 1)], 2) is None  # no scenario has k runs


def test_pass_hat_k_is_the_exact_mean_on_every_python() -> None:
    # (1 + 6/10 + 1/10 + 0) / 4 = 17/40: a float sum gives 0.42500000000000004 on Python 3.11 (printed 43%)
    # and 0.425 on 3.12 (42%); the committed agents report differed between the two
    counts = [(5, 5), (4, 5), (2, 5), (0, 5)]
    assert averages.pass_hat_k(counts, 2) == float(Fraction(17, 40))


def test_power_at_n25_matches_the_reference_table() -> None:
    boschloo, exact = sample_size.two_sample_power(25, 1.0, 0.8)
    assert exact and boschloo == approx(0.77, abs=0.006)
    assert sample_size.two_sample_power(25, 1.0, 0.8, test="fisher")[0] == approx(0.58, abs=0.006)
    assert sample_size.detectable_rate(25, 1.0) == approx(0.79, abs=0.003)
    assert sample_size.detectable_rate(25, 1.0, test="fisher") == approx(0.746, abs=0.002)


def test_runs_needed_per_arm() -> None:
    assert sample_size.n_needed(1.0, 0.8) == sample_size.SampleSize(27, pytest.approx(0.818, abs=1e-3), True)  # type: ignore[arg-type]
    assert sample_size.n_needed(1.0, 0.8, test="fisher").n == 33
    # the reference table gave 66 for Fisher at 95% → 80%; its exact power at 66 is 0.7996, so strictly 67
    assert sample_size.two_sample_power(66, 0.95, 0.8, test="fisher")[0] == approx(0.80, abs=0.001)
    assert sample_size.approx_n(1.0, 0.8) == 27
    assert sample_size.approx_n(0.95, 0.8) == 60


def test_power_is_exact_at_large_n_and_the_search_finds_the_first_n() -> None:
    """the normal approximation said 343 runs reach 80% at 0.95 → 0.9; exactly, 343 give 0.780."""
    assert sample_size.two_sample_power(343, 0.95, 0.9) == (approx(0.7798, abs=5e-4), True)
    assert sample_size.approx_n(0.95, 0.9) == 343
    needed = sample_size.n_needed(0.95, 0.9)
    assert needed.exact and needed.power >= 0.8 and 350 <= needed.n <= 365
    assert sample_size.two_sample_power(needed.n - 1, 0.95, 0.9)[0] < 0.8


def test_sprt_bounds_and_decisions() -> None:
    upper, lower = wald.sprt_bounds(0.05, 0.2)
    assert (upper, lower) == (approx(2.773, abs=5e-4), approx(-1.558, abs=5e-4))
    assert wald.sprt([False, False], 0.95, 0.8).decision == "regression"
    assert wald.sprt([True] * 9, 0.95, 0.8).decision == "continue"
    accepted = wald.sprt([True] * 12, 0.95, 0.8)
    assert (accepted.decision, accepted.runs) == ("accept", 10)


def test_sprt_with_a_perfect_baseline_stops_at_the_first_failure() -> None:
    result = wald.sprt([True, True, False, True], 1.0, 0.8)
    assert (result.decision, result.runs, result.failures) == ("regression", 3, 1)
    with pytest.raises(ValueError):
        wald.sprt([], 0.8, 0.9)
