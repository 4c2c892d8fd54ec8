"""BFCL's Java and JavaScript rules (issue 30, item 7): each argument is text, read back as BFCL's own
converters read it (held against them on arbitrary text), and judged as BFCL judges the value read. The
three causes a second sample found, each now a test: a Java name compared exactly where it was
normalised, a JavaScript "5.0" for a float answer, and a boolean answer for a string parameter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("bfcl_eval")

from bfcl_eval.eval_checker.ast_eval.type_convertor.java_type_converter import java_type_converter
from bfcl_eval.eval_checker.ast_eval.type_convertor.js_type_converter import js_type_converter

from evalkit.importers.bfcl import _refusal as refusal
from evalkit.importers.bfcl import import_bfcl
from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import load_category
from evalkit.importers.bfcl.reference import bfcl_verdict
from evalkit.scenario.language_values import COLLECTION, LANGUAGE_TYPES, read_value
from evalkit.scenario.model import Scenario
from tests.bfcl.test_agreement import evalkit_verdict

CONVERTERS = {"java": java_type_converter, "javascript": js_type_converter}
TEXTS = st.text(alphabet=st.sampled_from(list("0123456789-+.eEfFlLn tTrRuUfalsAbcx'\"[]{}(),:=<>\n")), max_size=14)
JAVA_COLLECTION_TEXTS = st.sampled_from(
    [
        "new int[]{1, 2}",
        'new ArrayList<String>(Arrays.asList("a"))',
        "new ArrayList<>()",
        'new HashMap<String, String>() {{ put("a", "b"); }}',
        "new HashMap<>()",
        "args",
        "new String[]",
    ]
)


def _bfcl(language: str, kind: str, text: str) -> Any:
    try:
        return CONVERTERS[language](text, kind)
    except Exception as exc:
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([(lang, kind) for lang, kinds in LANGUAGE_TYPES.items() for kind in kinds]), TEXTS)
def test_a_value_is_read_as_bfcls_converter_reads_it(language_kind: tuple[str, str], text: str) -> None:
    language, kind = language_kind
    theirs, ours = _bfcl(language, kind, text), read_value(text, language, kind)
    if isinstance(theirs, list | dict):  # a collection: evalkit does not read one, and equals no name with it
        assert ours is COLLECTION
    elif isinstance(theirs, type):
        pytest.fail(f"BFCL's converter raised {theirs.__name__} on {text!r}")
    else:
        assert (type(ours), ours) == (type(theirs), theirs)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Array", "ArrayList", "HashMap"]), JAVA_COLLECTION_TEXTS)
def test_a_java_collection_text_is_told_from_a_name(kind: str, text: str) -> None:
    theirs, ours = _bfcl("java", kind, text), read_value(text, "java", kind)
    assert (ours is COLLECTION) == isinstance(theirs, list | dict) and (ours is COLLECTION or ours == theirs)


def _imported(category: str, case_id: str) -> tuple[dict[str, Any], dict[str, Any], Scenario]:
    case, answer = next((c, a) for c, a in load_category(category) if c["id"] == case_id)
    conversion = convert_case(category, case, answer)
    assert conversion.scenario is not None and not refusal(conversion.scenario)
    return case, answer, Scenario.model_validate(conversion.scenario)


def _both(category: str, case_id: str, output: list[dict[str, Any]]) -> tuple[bool, bool]:
    case, answer, scenario = _imported(category, case_id)
    return evalkit_verdict(scenario, output), bfcl_verdict(category, case["function"], output, answer["ground_truth"])


def test_a_java_name_for_an_integer_parameter_is_compared_exactly() -> None:
    # before: " EVENT_THREAD." passed evalkit (normalised text) and failed BFCL (a variable: compared exactly)
    call = "suspendpolicy017_settingVMDeathRequest"
    assert _both(
        "simple_java", "simple_java_87", [{call: {"suspendPolicy": "EVENT_THREAD", "property": "deathEvent001"}}]
    ) == (True, True)
    assert _both(
        "simple_java", "simple_java_87", [{call: {"suspendPolicy": " EVENT_THREAD.", "property": "deathEvent001"}}]
    ) == (False, False)
    # a String parameter is still normalised, as BFCL's string check does
    assert _both(
        "simple_java", "simple_java_87", [{call: {"suspendPolicy": "EVENT_THREAD", "property": " DEATH-event001."}}]
    ) == (True, True)


@pytest.mark.parametrize(
    ("text", "passes"), [("5", True), ("5.0", True), ("5.00", True), ("5.0f", False), (" 5", False)]
)
def test_a_javascript_float_is_read_as_a_number(text: str, passes: bool) -> None:
    # before: "5.0" for the float answer 5.0 written "5.0" passed, but "5" failed evalkit (text "5" != "50")
    args = {"time": text, "gravity": "9.81", "initialVelocity": "0"}
    assert _both("simple_javascript", "simple_javascript_18", [{"calculateFinalVelocity": args}]) == (passes, passes)


@pytest.mark.parametrize(
    ("smoking", "passes"), [(False, True), ("False", False), ("false", False), (True, False), (None, False)]
)
def test_a_boolean_answer_for_a_string_parameter_follows_bfcls_type_rule(smoking: Any, passes: bool) -> None:
    # before: the converted scenario refused to load ("a boolean where the parameter is a string"); BFCL
    # takes the answer's type (a boolean) for the parameter's and compares exactly
    args = {"location": "London, UK", "smoking_allowed": smoking}
    assert _both("live_multiple", "live_multiple_301-131-0", [{"Hotels_4_SearchHotel": args}]) == (passes, passes)
    without = [{"Hotels_4_SearchHotel": {"location": "London, UK"}}]  # the answer lets it out
    assert _both("live_multiple", "live_multiple_301-131-0", without) == (True, True)


def test_a_required_boolean_for_a_string_is_the_one_kind_not_imported() -> None:
    """Named rule answer_breaks_its_schema: BFCL passes only a value its function's schema forbids."""
    _, report = import_bfcl(["live_multiple"], None, 0)
    reasons = dict(report.skipped)
    assert (
        reasons["live_multiple_552-153-1"]
        == "reference.calls.0.arguments.is_unisex: a boolean where the parameter is a string"
    )
