"""The test named in every output is the test that produced the p-value."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.render import render_markdown, render_text
from evalkit.stats import exact
from evalkit.stats.score import fm_pvalue
from evalkit.stats.unconditional import Table, exact_pvalue
from tests.report import records


def unpaired(x1: int, n1: int, x2: int, n2: int) -> tuple[str, float, bool]:
    base = records.cell_runs(x1, n1)
    cand = records.cell_runs(x2, n2, seed=7)  # one seed for every run: no pairs
    result = compare(
        records.results(base, runs_per_cell=n1), records.results(cand, runs_per_cell=n2), GateConfig(level="cell")
    )
    (v,) = result.cells
    assert v.test in render_text(result, verbose=True) and v.test in render_markdown(result)
    return v.test, v.p, v.failed


def boschloo_by_scipy(x1: int, n1: int, x2: int, n2: int, points: int = 2001) -> float:
    """Boschloo's p from its definition with scipy's distributions: the largest P_π(Fisher p ≤
    observed) over a grid of π (a lower bound of the supremum, tight at this grid)."""
    fisher = sps.hypergeom.sf(
        np.arange(n1 + 1)[:, None] - 1, n1 + n2, n1, np.add.outer(np.arange(n1 + 1), np.arange(n2 + 1))
    )
    region = fisher <= fisher[x1, x2] * (1 + 1e-9)
    pis = np.linspace(0.0, 1.0, points)
    return max(
        float(sps.binom.pmf(np.arange(n1 + 1), n1, pi) @ region @ sps.binom.pmf(np.arange(n2 + 1), n2, pi))
        for pi in pis
    )


def test_600_a_side_is_boschloo_exact_not_the_mid_p() -> None:
    """600/600 → 596/600: Fisher's mid-p is 0.031 and would fail the cell; Boschloo's p is 0.056."""
    test, p, failed = unpaired(600, 600, 596, 600)
    assert test == "Boschloo exact"
    assert p == pytest.approx(boschloo_by_scipy(600, 600, 596, 600), rel=2e-3)
    assert p == pytest.approx(0.0564, abs=5e-4) and not failed
    assert exact.midp(600, 600, 596, 600) == pytest.approx(0.0311, abs=5e-4)


def test_above_the_exact_limit_the_label_says_so_and_the_p_keeps_alpha() -> None:
    """Above 1,000 runs a side the mid-p (0.031 at 600/600 → 596/600, liberal) is not used: the cell's p
    is the larger of Suissa and Shuster's exact unconditional test and the pooled score test, so the
    cell fails only where both do (a sub-region of an exact test's: its size stays ≤ α)."""
    n = 1100
    test, p, _ = unpaired(n, n, n - 4, n)
    assert test == "exact and score test (Farrington–Manning score, above 1,000 runs a side)"
    table = Table(n, n, n - 4, n)
    assert p == pytest.approx(max(exact_pvalue("fm", table, 0.0), fm_pvalue(n, n, n - 4, n, 0.0)), rel=1e-12)
    assert p >= exact_pvalue("fm", table, 0.0) != exact.midp(n, n, n - 4, n)
