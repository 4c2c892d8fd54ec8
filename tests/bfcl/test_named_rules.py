"""Each deliberate difference from BFCL's checker, shown on an input where the two disagree, and the
string normalisation shown to equal BFCL's on arbitrary strings."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))

from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.reference import bfcl_verdict, standardize_string
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.scenario.matching import MatchRules, normalise_text, value_matches
from evalkit.scenario.model import Scenario
from tests.bfcl.test_agreement import evalkit_verdict

BFCL = MatchRules(normalise="bfcl", strict_types=True)


def _case(category: str, params: dict[str, Any], truth: list[dict[str, Any]]) -> tuple[Scenario, dict[str, Any]]:
    function = {
        "name": "lab.run",
        "description": "Run a lab job.",
        "parameters": {"type": "dict", "properties": params, "required": sorted(params)},
    }
    case = {"id": f"{category}_0", "question": [[{"role": "user", "content": "Run it."}]], "function": [function]}
    conversion = convert_case(category, case, {"id": case["id"], "ground_truth": truth})
    assert conversion.scenario is not None and not conversion.approximations
    return Scenario.model_validate(conversion.scenario), case


def test_every_named_rule_has_a_test_here() -> None:
    tested = {name.removeprefix("test_rule_") for name in globals() if name.startswith("test_rule_")}
    tested.add("cut_off_call_is_malformed")  # in test_agreement.py, on the sampled irrelevance cases
    assert tested == set(DELIBERATE_DIFFERENCES)


def test_rule_normalise_at_every_depth() -> None:
    params = {"grid": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}
    scenario, case = _case("simple_python", params, [{"lab.run": {"grid": [[["New York", "Paris"]]]}}])
    output = [{"lab_run": {"grid": [["new york", "PARIS"]]}}]
    assert evalkit_verdict(scenario, output) is True
    assert (
        bfcl_verdict("simple_python", case["function"], output, [{"lab.run": {"grid": [[["New York", "Paris"]]]}}])
        is False
    )


def test_rule_types_at_every_depth() -> None:
    params = {"grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}}
    truth = [{"lab.run": {"grid": [[[1, 2]]]}}]
    scenario, case = _case("simple_python", params, truth)
    output = [{"lab_run": {"grid": [[1.0, 2.0]]}}]
    assert evalkit_verdict(scenario, output) is False
    assert bfcl_verdict("simple_python", case["function"], output, truth) is True


def test_rule_one_to_one_is_a_maximum_matching() -> None:
    params = {"city": {"type": "string"}}
    truth = [{"lab.run": {"city": ["Paris", "Rome"]}}, {"lab.run": {"city": ["Paris"]}}]
    scenario, case = _case("parallel", params, truth)
    output = [{"lab_run": {"city": "Paris"}}, {"lab_run": {"city": "Rome"}}]
    assert evalkit_verdict(scenario, output) is True  # Rome -> first answer, Paris -> second
    assert bfcl_verdict("parallel", case["function"], output, truth) is False  # first answer takes Paris


def test_rule_degenerate_reply_fails() -> None:
    scenario, case = _case("irrelevance", {"city": {"type": "string"}}, [])
    looping = "Let me check.\n" * 6
    assert bfcl_verdict("irrelevance", case["function"], [], None) is True  # no call: that is all BFCL asks
    assert evalkit_verdict(scenario, [], reply="I cannot run lab jobs for that.") is True
    assert evalkit_verdict(scenario, [], reply=looping) is False
    assert evalkit_verdict(scenario, [], reply="<|im_start|>assistant") is False


@given(st.text(alphabet=st.sampled_from("aAbZ 19,./-_*^'\"éßİ\tx"), max_size=20))
def test_bfcl_normalisation_is_bfcls(text: str) -> None:
    assert normalise_text(text, "bfcl") == standardize_string(text)


@given(st.text(max_size=12), st.text(max_size=12))
def test_bfcl_string_equality_is_bfcls(spec: str, actual: str) -> None:
    assert value_matches(spec, actual, BFCL) == (standardize_string(spec) == standardize_string(actual))


def test_rule_relevance_needs_an_offered_tool() -> None:
    function = {"name": "lab.run", "description": "d", "parameters": {"type": "dict", "properties": {}}}
    case = {"id": "live_relevance_0", "question": [[{"role": "user", "content": "Run it."}]], "function": [function]}
    conversion = convert_case("live_relevance", case, None)
    assert conversion.scenario is not None
    scenario = Scenario.model_validate(conversion.scenario)
    invented = [{"lab_stop": {}}]
    assert bfcl_verdict("live_relevance", case["function"], invented, None) is True
    assert evalkit_verdict(scenario, invented) is False
    assert evalkit_verdict(scenario, [{"lab_run": {}}]) is True


def test_rule_no_call_where_bfcl_expects_none() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    pytest.importorskip("mpmath", reason=needs_extra("bfcl"))
    from evalkit.importers.bfcl.data import load_category
    from tests.bfcl.multi_turn_runs import bfcl_multi_turn_verdict, evalkit_multi_turn_verdict, runs

    case, answer = next(
        (c, a) for c, a in load_category("multi_turn_miss_param") if c["id"] == "multi_turn_miss_param_1"
    )
    conversion = convert_case("multi_turn_miss_param", case, answer)
    assert conversion.scenario is not None
    scenario = Scenario.model_validate(conversion.scenario)
    truth = answer["ground_truth"]
    generated = dict(runs(truth))
    guessed = generated["turn 3: guessed call"]  # tail(...) before the user said how many lines
    assert bfcl_multi_turn_verdict(case, guessed, truth) is True
    assert evalkit_multi_turn_verdict(scenario, guessed) is False
    assert bfcl_multi_turn_verdict(case, generated["ground truth"], truth) is True
    assert evalkit_multi_turn_verdict(scenario, generated["ground truth"]) is True


def test_rule_answer_breaks_its_schema() -> None:
    """A boolean answer for a required string parameter: BFCL passes only `true`, which the function's
    own schema forbids, so evalkit does not import the case; made optional, the case imports, and its
    verdicts are BFCL's."""
    params = {"open": {"type": "string", "description": "'True' or 'False'"}}
    truth = [{"lab.run": {"open": [True]}}]
    function = {
        "name": "lab.run",
        "description": "d",
        "parameters": {"type": "dict", "properties": params, "required": []},
    }
    case = {"id": "live_multiple_0", "question": [[{"role": "user", "content": "Run it."}]], "function": [function]}
    conversion = convert_case("live_multiple", case, {"id": case["id"], "ground_truth": truth})
    assert conversion.scenario is not None
    with pytest.raises(ValueError, match="a boolean where the parameter is a string"):
        Scenario.model_validate(conversion.scenario)
    assert bfcl_verdict("live_multiple", [function], [{"lab_run": {"open": True}}], truth) is True
    assert bfcl_verdict("live_multiple", [function], [{"lab_run": {"open": "True"}}], truth) is False
    optional = [{"lab.run": {"open": ["", True]}}]
    conversion = convert_case("live_multiple", case, {"id": case["id"], "ground_truth": optional})
    scenario = Scenario.model_validate(conversion.scenario)
    for output in ([{"lab_run": {"open": True}}], [{"lab_run": {"open": "True"}}], [{"lab_run": {}}]):
        assert evalkit_verdict(scenario, output) == bfcl_verdict("live_multiple", [function], output, optional)
