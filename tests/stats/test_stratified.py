"""The stratified (Cochran–Mantel–Haenszel) test against its definition and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.stats.stratified import cmh


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
