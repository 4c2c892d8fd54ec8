"""`check`: real cells against the simulation's prediction intervals; leave-one-stack-out; power."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalkit.backends.sim_profile import SimProfile
from evalkit.scenario.model import Scenario
from evalkit.simfit.check import _interval, check
from evalkit.simfit.classify import Recorded, classify_files
from evalkit.simfit.fit import fit_profile
from evalkit.simfit.simulated_power import estimate_power
from tests.simfit.conftest import KNOWN


def test_the_prediction_interval_is_the_binomial_mixture_s() -> None:
    assert _interval(5, np.array([1.0, 1.0])) == (1.0, 1.0)
    assert _interval(5, np.array([0.5])) == (0.0, 1.0)  # P(0) = P(5) = 1/32 > 2.5%
    assert _interval(20, np.array([0.5])) == (0.3, 0.7)  # Binomial(20, 1/2): 6 and 14 are the 2.5% quantiles
    assert _interval(10, np.array([0.0, 1.0])) == (0.0, 1.0)  # a mixture, not an average


@pytest.fixture(scope="module")
def known(known_results: Path, scenarios: list[Scenario]) -> Recorded:
    return classify_files([known_results], str(known_results.parent / "known.yaml"), scenarios, simulated=True)


def test_a_profile_fitted_to_its_own_runs_predicts_them(known: Recorded, scenarios: list[Scenario]) -> None:
    result = check(fit_profile(known), known, scenarios, draws=10, runs=10)
    assert len(result.cells) == 4 and result.share_inside == 1.0
    assert sorted(s.stack for s in result.stacks) == ["retry_nudge", "trust_text"]
    for stack in result.stacks:
        assert stack.low <= stack.observed <= stack.high, stack


def test_a_wrong_profile_is_caught(known: Recorded, scenarios: list[Scenario]) -> None:
    perfect = dict(
        KNOWN["tool_step"], correct=1.0, text_instead_of_tool=0, malformed_call=0, hallucinated_tool=0, call_as_text=0
    )
    fitted = fit_profile(known)
    wrong = SimProfile.model_validate({**fitted.model_dump(), "tool_step": perfect, "overrides": []})
    wrong = wrong.model_copy(update={"fitted": fitted.fitted.model_copy(update={"estimates": {}})})  # type: ignore[union-attr]
    outside = [c for c in check(wrong, known, scenarios, draws=5, runs=10).cells if not c.inside]
    assert {c.scenario for c in outside} == {"seq-weather-trip"}


def test_power_by_simulation(scenarios: list[Scenario]) -> None:
    profile = SimProfile.model_validate(KNOWN)
    trip = [s for s in scenarios if s.id == "seq-weather-trip"]
    stacks = {"trust_text": ["trust_text"], "retry_nudge": ["retry_nudge"]}
    better = estimate_power(profile, trip, stacks, a="trust_text", b="retry_nudge", runs=15, experiments=20)
    same = estimate_power(profile, trip, stacks, a="trust_text", b="trust_text", runs=15, experiments=20)
    assert better.rate_b > better.rate_a and better.power >= 0.8
    assert same.power == 0.0 and same.rate_a == same.rate_b  # shared seeds: a stack against itself ties
