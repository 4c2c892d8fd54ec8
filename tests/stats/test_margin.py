"""The margin tests (Farrington–Manning unpaired, Tango paired) against their definitions, computed
independently with scipy: the restricted maximum-likelihood rates by numerical optimisation, the
power by summing scipy's binomial probabilities, the size by enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from evalkit.stats import margin as mg

TABLES = [
    (25, 25, 20, 25, 0.05),
    (24, 25, 22, 25, 0.1),
    (40, 50, 30, 45, 0.05),
    (10, 30, 12, 30, 0.2),
    (25, 25, 25, 25, 0.1),
]


def restricted_numeric(x1: int, n1: int, x2: int, n2: int, d: float) -> tuple[float, float]:
    """argmax of the two binomial log-likelihoods on the line p1 − p2 = d."""

    def nll(p2: float) -> float:
        p1 = p2 + d
        return -float(sps.binom.logpmf(x1, n1, p1) + sps.binom.logpmf(x2, n2, p2))

    res = optimize.minimize_scalar(nll, bounds=(1e-12, 1 - d - 1e-12), method="bounded", options={"xatol": 1e-12})
    return float(res.x) + d, float(res.x)


@pytest.mark.parametrize(("x1", "n1", "x2", "n2", "d"), TABLES)
def test_farrington_manning_z_uses_the_restricted_mle(x1: int, n1: int, x2: int, n2: int, d: float) -> None:
    t1, t2 = restricted_numeric(x1, n1, x2, n2, d)
    z = (x1 / n1 - x2 / n2 - d) / math.sqrt(t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2)
    assert float(mg.fm_z(x1, n1, x2, n2, d)) == pytest.approx(z, rel=1e-5)
    assert mg.fm_pvalue(x1, n1, x2, n2, d) == pytest.approx(sps.norm.sf(z), rel=1e-4)


def test_at_margin_zero_fm_is_the_pooled_score_test() -> None:
    x1, n1, x2, n2 = 45, 50, 38, 50
    pooled = (x1 + x2) / (n1 + n2)
    z = (x1 / n1 - x2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert float(mg.fm_z(x1, n1, x2, n2, 0.0)) == pytest.approx(z, rel=1e-9)


def test_fm_power_is_the_sum_over_tables() -> None:
    n1, n2, pb, pc, d, alpha = 20, 15, 0.9, 0.6, 0.05, 0.05
    total = sum(
        sps.binom.pmf(a, n1, pb) * sps.binom.pmf(b, n2, pc)
        for a in range(n1 + 1)
        for b in range(n2 + 1)
        if mg.fm_pvalue(a, n1, b, n2, d) <= alpha
    )
    assert mg.fm_power(n1, n2, pb, pc, d, alpha) == pytest.approx(total, rel=1e-9)


@pytest.mark.parametrize(("b", "c", "n", "d"), [(5, 1, 25, 0.05), (3, 3, 40, 0.1), (0, 0, 25, 0.05), (8, 2, 60, 0.02)])
def test_tango_z_uses_the_restricted_mle(b: int, c: int, n: int, d: float) -> None:
    rest = n - b - c

    def nll(u: float) -> float:
        return -float(b * np.log(u + d) + (c * np.log(u) if c else 0.0) + rest * np.log(1 - 2 * u - d))

    res = optimize.minimize_scalar(nll, bounds=(1e-12, (1 - d) / 2 - 1e-12), method="bounded", options={"xatol": 1e-13})
    u = float(res.x)
    z = (b - c - n * d) / math.sqrt(n * (2 * u + d - d * d))
    assert float(mg.tango_z(b, c, n, d)) == pytest.approx(z, rel=1e-5, abs=1e-6)


def test_tango_power_is_the_sum_over_outcomes_and_a_simulation_agrees() -> None:
    n, pb, pc, d, alpha = 30, 0.95, 0.7, 0.05, 0.05
    ql, qg = pb * (1 - pc), (1 - pb) * pc
    total = sum(
        sps.multinomial.pmf([b, c, n - b - c], n, [ql, qg, 1 - ql - qg])
        for b in range(n + 1)
        for c in range(n + 1 - b)
        if mg.tango_pvalue(b, c, n, d) <= alpha
    )
    assert mg.tango_power(n, pb, pc, d, alpha) == pytest.approx(total, rel=1e-9)
    rng = np.random.default_rng(3)
    base, cand = rng.random((20000, n)) < pb, rng.random((20000, n)) < pc
    lost, gained = (base & ~cand).sum(axis=1), (~base & cand).sum(axis=1)
    simulated = float((sps.norm.sf(mg.tango_z(lost, gained, n, d)) <= alpha).mean())
    assert simulated == pytest.approx(total, abs=0.015)


@pytest.mark.parametrize(("n", "pb"), [(100, 0.9), (200, 0.8)])
def test_fm_size_at_the_margin_is_near_alpha(n: int, pb: float) -> None:
    """A candidate exactly D below the baseline is called a regression about α of the time (the
    test is asymptotic: the benchmark prints the size at N = 25 too)."""
    size = mg.fm_power(n, n, pb, pb - 0.05, 0.05, 0.05)
    assert 0.03 <= size <= 0.07
