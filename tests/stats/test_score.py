"""The score statistics (Farrington–Manning unpaired, Tango paired) against their definitions,
computed independently with scipy: the restricted maximum-likelihood rates by numerical
optimisation, for positive and negative margins; the score interval as the set of margins the
score test does not reject; and the monotonicity the exact tests' regions rely on."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from evalkit.stats import score

TABLES = [
    (25, 25, 20, 25, 0.05),
    (24, 25, 22, 25, 0.1),
    (40, 50, 30, 45, 0.05),
    (10, 30, 12, 30, 0.2),
    (25, 25, 25, 25, 0.1),
    (20, 25, 23, 25, -0.05),
    (5, 30, 9, 25, -0.2),
]


def restricted_numeric(x1: int, n1: int, x2: int, n2: int, d: float) -> tuple[float, float]:
    """argmax of the two binomial log-likelihoods on the line p1 − p2 = d."""

    def nll(p2: float) -> float:
        p1 = p2 + d
        return -float(sps.binom.logpmf(x1, n1, p1) + sps.binom.logpmf(x2, n2, p2))

    low, high = max(0.0, -d) + 1e-12, min(1.0, 1.0 - d) - 1e-12
    res = optimize.minimize_scalar(nll, bounds=(low, high), method="bounded", options={"xatol": 1e-12})
    return float(res.x) + d, float(res.x)


@pytest.mark.parametrize(("x1", "n1", "x2", "n2", "d"), TABLES)
def test_farrington_manning_z_uses_the_restricted_mle(x1: int, n1: int, x2: int, n2: int, d: float) -> None:
    t1, t2 = restricted_numeric(x1, n1, x2, n2, d)
    z = (x1 / n1 - x2 / n2 - d) / math.sqrt(t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2)
    assert float(score.fm_z(x1, n1, x2, n2, d)) == pytest.approx(z, rel=1e-5)
    assert score.fm_pvalue(x1, n1, x2, n2, d) == pytest.approx(sps.norm.sf(z), rel=1e-4)
    # the mirror image: "p₂ − p₁ > −d" is the same statistic with its sign turned
    assert float(score.fm_z(x2, n2, x1, n1, -d)) == pytest.approx(-z, rel=1e-5)


def test_at_margin_zero_fm_is_the_pooled_score_test() -> None:
    x1, n1, x2, n2 = 45, 50, 38, 50
    pooled = (x1 + x2) / (n1 + n2)
    z = (x1 / n1 - x2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert float(score.fm_z(x1, n1, x2, n2, 0.0)) == pytest.approx(z, rel=1e-9)


@pytest.mark.parametrize(
    ("b", "c", "n", "d"), [(5, 1, 25, 0.05), (3, 3, 40, 0.1), (0, 0, 25, 0.05), (8, 2, 60, 0.02), (2, 7, 40, -0.1)]
)
def test_tango_z_uses_the_restricted_mle(b: int, c: int, n: int, d: float) -> None:
    rest = n - b - c

    def nll(u: float) -> float:  # u: P(gained); P(lost) = u + d; ties 1 − 2u − d
        return -float((b * np.log(u + d) if b else 0.0) + (c * np.log(u) if c else 0.0) + rest * np.log(1 - 2 * u - d))

    low = max(0.0, -d) + 1e-12
    res = optimize.minimize_scalar(nll, bounds=(low, (1 - d) / 2 - 1e-12), method="bounded", options={"xatol": 1e-13})
    u = float(res.x)
    z = (b - c - n * d) / math.sqrt(n * (2 * u + d - d * d))
    assert float(score.tango_z(b, c, n, d)) == pytest.approx(z, rel=1e-5, abs=1e-6)


def test_a_table_with_no_variance_is_the_nulls_only_outcome() -> None:
    """All passed on both sides: no evidence either way (0), not a drop of infinite size."""
    assert float(score.fm_z(25, 25, 25, 25, 0.0)) == 0.0 and float(score.tango_z(0, 0, 50, 0.0)) == 0.0


@pytest.mark.parametrize(
    ("paired", "table"), [(False, (25, 25, 20, 25)), (False, (40, 50, 45, 50)), (True, (10, 100, 0, 100))]
)
def test_the_score_interval_is_the_margins_the_score_test_does_not_reject(
    paired: bool, table: tuple[int, int, int, int]
) -> None:
    alpha = 0.05
    low, high = score.score_interval(paired, *table, alpha)
    x1, n1, x2, n2 = table

    def p_drop(d: float) -> float:
        z = score.tango_z(x1, x2, n1, d) if paired else score.fm_z(x1, n1, x2, n2, d)
        return float(sps.norm.sf(z))

    for d in np.linspace(-0.9, 0.9, 361):
        inside = low < d < high
        rejected = p_drop(d) <= alpha or 1 - p_drop(d) <= alpha
        assert inside != rejected or min(abs(d - low), abs(d - high)) < 1e-6


@pytest.mark.parametrize("d", [-0.2, -0.05, 0.0, 0.02, 0.1, 0.3])
def test_the_statistics_are_monotone_in_the_tables(d: float) -> None:
    """The exact tests' regions are staircases because each statistic rises with side 1's passes
    and falls with side 2's (unpaired), and rises with the lost pairs for a number of discordant
    pairs (paired): checked over every table up to 120 runs a side."""
    for n1, n2 in [(10, 10), (25, 25), (60, 40), (120, 120)]:
        z = score.fm_z(np.arange(n1 + 1)[:, None], n1, np.arange(n2 + 1)[None, :], n2, d)
        assert (np.diff(z, axis=0) >= -1e-9).all() and (np.diff(z, axis=1) <= 1e-9).all()
    for n in (10, 25, 80):
        b, c = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
        z = np.where(b + c <= n, score.tango_z(b, c, n, d), np.nan)
        with np.errstate(invalid="ignore"):
            assert not (np.diff(z, axis=0) < -1e-9).any() and not (np.diff(z, axis=1) > 1e-9).any()


def _fm_size(n: int, p_base: float, margin: float, alpha: float) -> float:
    """P(Farrington–Manning's score test rejects) with the candidate exactly `margin` below, summed
    over every table with scipy's binomial laws."""
    x1, x2 = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    rejects = score.fm_z(x1, n, x2, n, margin) >= sps.norm.isf(alpha)
    law = sps.binom.pmf(x1, n, p_base) * sps.binom.pmf(x2, n, p_base - margin)
    return float(law[rejects].sum())


def _tango_size(n: int, p_base: float, margin: float, alpha: float) -> float:
    """The same for Tango's paired score test, pairs with independent outcomes, over every
    (lost, gained) of the trinomial law."""
    p_cand = p_base - margin
    lost, gained = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    valid = lost + gained <= n
    with np.errstate(invalid="ignore"):
        rejects = valid & (score.tango_z(lost, gained, n, margin) >= sps.norm.isf(alpha))
    probs = [p_base * (1 - p_cand), (1 - p_base) * p_cand]
    total = 0.0
    for b, c in zip(*np.nonzero(rejects), strict=True):
        total += sps.multinomial.pmf([b, c, n - b - c], n, [*probs, 1 - sum(probs)])
    return total


def test_the_score_tests_alone_exceed_alpha_at_the_margin() -> None:
    """Why the gate never decides by a score test alone (docs/gate.md, "The tests, and what is exact";
    issue 29, observation 2): Farrington–Manning's rejects a cell exactly D down 0.070 of the time
    at α = 0.05, six such cells 0.072 at α/6; Tango's six cells 0.084 at α/6."""
    assert _fm_size(25, 0.95, 0.05, 0.05) == pytest.approx(0.070, abs=5e-4)
    assert 1 - (1 - _fm_size(50, 0.95, 0.1, 0.05 / 6)) ** 6 == pytest.approx(0.072, abs=5e-4)
    assert 1 - (1 - _tango_size(50, 0.95, 0.2, 0.05 / 6)) ** 6 == pytest.approx(0.084, abs=5e-4)
