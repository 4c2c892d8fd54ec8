"""The sequential gate's stopping rule against the fixed-N test it curtails (scipy's Boschloo) and a
simulation: sound decisions, exact error rates, family-wise false alarm ≤ α at 6, 48 and 170 cells."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.stats.stopping_rule import INTERIM_SHARE, cell_rule, decide, operating_characteristics


@pytest.mark.parametrize(("base_x", "base_n", "max_runs"), [(25, 25, 20), (22, 25, 20), (15, 20, 12)])
def test_the_threshold_is_where_scipys_boschloo_stops_rejecting(base_x: int, base_n: int, max_runs: int) -> None:
    rule = cell_rule(base_x, base_n, max_runs, 0.01, looks=3)
    assert rule.final_alpha == pytest.approx(0.01 * (1 - INTERIM_SHARE))
    assert rule.interim_alpha == pytest.approx(0.01 * INTERIM_SHARE / 3)

    def p(k: int) -> float:
        return float(sps.boschloo_exact([[base_x, k], [base_n - base_x, max_runs - k]], alternative="greater").pvalue)

    assert rule.k >= 0 and p(rule.k) <= rule.final_alpha * (1 + 1e-4)
    assert p(rule.k + 1) > rule.final_alpha * (1 - 1e-4)


def test_curtailed_decisions_hold_on_every_continuation() -> None:
    rule = cell_rule(24, 25, 12, 0.02, looks=0)
    for passes, failures in itertools.product(range(13), range(13)):
        if passes + failures > 12:
            continue
        decision = decide(rule, passes, failures, interim=False)
        remaining = 12 - passes - failures
        finals = {passes + extra <= rule.k for extra in range(remaining + 1)}  # does the fixed test reject?
        if decision == "regression":
            assert finals == {True}
        elif decision == "accept":
            assert finals == {False}
        if remaining == 0:
            assert decision in ("regression", "accept")


def simulate(rule_x: int, p: float, reps: int, rng: np.random.Generator, batch: int = 5) -> tuple[float, float]:
    rule = cell_rule(rule_x, 25, 30, 0.05 / 6, looks=5)
    rejected, runs = 0, 0
    for _ in range(reps):
        outcomes = rng.random(30) < p
        for seen in range(batch, 31, batch):
            decision = decide(rule, int(outcomes[:seen].sum()), seen - int(outcomes[:seen].sum()), interim=seen < 30)
            if decision != "continue":
                rejected += decision.startswith("regression")
                runs += seen
                break
    return rejected / reps, runs / reps


@pytest.mark.parametrize(("base_x", "p"), [(25, 0.6), (23, 0.9), (20, 0.5)])
def test_exact_operating_characteristics_match_a_simulation(base_x: int, p: float) -> None:
    rng = np.random.default_rng(20261123)
    rule = cell_rule(base_x, 25, 30, 0.05 / 6, looks=5)
    exact_reject, exact_runs = operating_characteristics(rule, p, 5)
    reps = 4000
    sim_reject, sim_runs = simulate(base_x, p, reps, rng)
    assert abs(sim_reject - exact_reject) <= 4 * np.sqrt(exact_reject * (1 - exact_reject) / reps) + 1e-9
    assert sim_runs == pytest.approx(exact_runs, rel=0.05)


@pytest.mark.parametrize("cells", [6, 48, 170])
@pytest.mark.parametrize("true_rate", [0.5, 0.8, 0.9, 0.95, 1.0])
def test_family_wise_false_alarm_is_at_most_alpha_with_nothing_changed(cells: int, true_rate: float) -> None:
    """Baseline (25 runs) and candidate share the true rate in every cell; exact, over the baseline's binomial."""
    per_cell = 0.0
    for base_x in range(26):
        weight = float(sps.binom.pmf(base_x, 25, true_rate))
        if weight > 1e-12:
            rule = cell_rule(base_x, 25, 50, 0.05 / cells, looks=9)
            per_cell += weight * operating_characteristics(rule, true_rate, 5)[0]
    assert 1 - (1 - per_cell) ** cells <= 0.05
