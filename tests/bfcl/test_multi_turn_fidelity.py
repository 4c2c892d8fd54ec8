"""Judging a BFCL multi-turn transcript has no side effect on the scenario, and every backend class is
built from the case's initial state, an empty one too (BFCL calls `_load_scenario` on each)."""

from __future__ import annotations

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import load_category
from evalkit.judge.reference_check import reference_problems
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks


def _scenario(category: str, case_id: str) -> Scenario:
    case, answer = next((c, a) for c, a in load_category(category) if c["id"] == case_id)
    conversion = convert_case(category, case, answer)
    assert conversion.scenario is not None
    return Scenario.model_validate(conversion.scenario)


def test_judging_twice_leaves_the_scenario_as_it_was() -> None:
    """post_tweet keeps the list it is given; the reference's `mentions` grew with every judgement."""
    scenario = _scenario("multi_turn_miss_param", "multi_turn_miss_param_90")
    before = scenario.model_dump(mode="json")
    assert not reference_problems(scenario)
    assert not reference_problems(scenario)
    assert scenario.model_dump(mode="json") == before


def test_every_class_is_built_from_the_cases_initial_state() -> None:
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    for case, answer in load_category("multi_turn_base")[:60]:
        conversion = convert_case("multi_turn_base", case, answer)
        assert conversion.scenario is not None
        mocks = StatefulMocks(Scenario.model_validate(conversion.scenario))
        for path, instance in mocks.instances.items():
            name = path.rpartition(":")[2]
            if name in STATELESS_CLASSES:
                continue
            fresh = type(instance)()
            fresh._load_scenario(dict(case["initial_config"].get(name, {})))
            public = {k: v for k, v in vars(fresh).items() if not k.startswith("_")}  # what BFCL compares
            assert public == {k: v for k, v in vars(instance).items() if not k.startswith("_")}, (case["id"], name)


def test_a_turn_with_reference_calls_and_no_call_fails_as_in_bfcl() -> None:
    """multi_turn_miss_func_60's turn 4 repeats results produced earlier: without a call it passed evalkit."""
    from tests.bfcl.multi_turn_runs import bfcl_multi_turn_verdict, evalkit_multi_turn_verdict, runs

    case, answer = next(
        (c, a) for c, a in load_category("multi_turn_miss_func") if c["id"] == "multi_turn_miss_func_60"
    )
    scenario = _scenario("multi_turn_miss_func", "multi_turn_miss_func_60")
    idle = dict(runs(answer["ground_truth"]))["turn 4: no calls"]
    assert bfcl_multi_turn_verdict(case, idle, answer["ground_truth"]) is False
    assert evalkit_multi_turn_verdict(scenario, idle) is False
