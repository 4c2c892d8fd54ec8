"""The stratified test (Cochran–Mantel–Haenszel's statistic, exact conditional p) against its
definition, scipy's Fisher test for one stratum, a brute-force enumeration for two, and simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.stats.stratified import cmh, conditional_pvalue


def test_one_stratum_is_the_hypergeometric_score_test() -> None:
    xb, nb, xc, nc = 23, 25, 17, 25
    total, passes = nb + nc, xb + xc
    mean = sps.hypergeom.mean(total, passes, nb)  # baseline passes given the margins
    var = sps.hypergeom.var(total, passes, nb)
    result = cmh([(xb, nb, xc, nc)], 0.9)
    assert result is not None and result.z == pytest.approx((xb - mean) / math.sqrt(var), rel=1e-12)
    assert result.difference == pytest.approx(xc / nc - xb / nb, rel=1e-12)
    wald = math.sqrt((xb / nb) * (1 - xb / nb) / nb + (xc / nc) * (1 - xc / nc) / nc)
    assert (result.high - result.low) / 2 == pytest.approx(sps.norm.ppf(0.95) * wald, rel=0.05)


def test_size_and_power_by_simulation() -> None:
    rng = np.random.default_rng(5)
    rates = np.linspace(0.7, 0.98, 48)

    def share(drop: float, reps: int = 1500) -> float:
        hits = 0
        for _ in range(reps):
            xb = rng.binomial(25, rates)
            xc = rng.binomial(25, np.clip(rates - drop, 0, 1))
            result = cmh([(int(b), 25, int(c), 25) for b, c in zip(xb, xc, strict=True)], 0.9)
            hits += result is not None and result.p <= 0.05
        return hits / reps

    assert share(0.0) <= 0.05 + 0.015
    assert share(0.05) > 0.5  # 5 points in each of 48 cells: seen by the stratified test


def test_no_variance_is_none() -> None:
    assert cmh([(25, 25, 25, 25), (25, 25, 25, 25)], 0.9) is None


def test_the_p_value_is_exact_and_conditional() -> None:
    """One stratum: Fisher's one-sided test. Two: the sum of the baseline's passes enumerated over
    every pair of tables with the observed margins, under the hypergeometric laws."""
    fisher = sps.fisher_exact([[23, 17], [2, 8]], alternative="greater").pvalue
    assert conditional_pvalue([(23, 25, 17, 25)]) == pytest.approx(fisher, rel=1e-12)
    strata = [(9, 10, 6, 10), (18, 20, 15, 20)]
    laws = [sps.hypergeom(nb + nc, xb + xc, nb) for xb, nb, xc, nc in strata]
    observed = sum(xb for xb, *_ in strata)
    brute = sum(laws[0].pmf(a) * laws[1].pmf(b) for a in range(11) for b in range(21) if a + b >= observed)
    assert conditional_pvalue(strata) == pytest.approx(brute, rel=1e-12)


@pytest.mark.parametrize("rate", [0.5, 0.8, 0.95, 0.99])
def test_its_size_is_at_most_alpha_by_enumeration(rate: float) -> None:
    """Two strata of 8 runs a side, every outcome enumerated: with nothing changed the test rejects
    at most α of the time (the normal approximation of Z has no such guarantee)."""
    n, alpha = 8, 0.05
    pmf = sps.binom.pmf(np.arange(n + 1), n, rate)
    size = 0.0
    for b1 in range(n + 1):
        for c1 in range(n + 1):
            for b2 in range(n + 1):
                for c2 in range(n + 1):
                    weight = pmf[b1] * pmf[c1] * pmf[b2] * pmf[c2]
                    if weight > 1e-14 and conditional_pvalue([(b1, n, c1, n), (b2, n, c2, n)]) <= alpha:
                        size += weight
    assert size <= alpha
