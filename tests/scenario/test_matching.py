"""Argument matching: one set of rules at every depth (evalkit.scenario.matching), with the issue-8 inputs."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import EvalkitError, SpecError
from evalkit.scenario.matching import MatchRules, args_match, mismatch, normalise_text, spec_problem, value_matches

EXACT = MatchRules(normalise="exact")
STRICT = MatchRules(strict_types=True)
CLOSED = MatchRules(extra_keys="forbid")


@pytest.mark.parametrize("actual", [1, "1", 1.0, 0, "true"])
def test_booleans_never_match_numbers_or_strings(actual: Any) -> None:
    assert not value_matches(True, actual)
    assert not value_matches({"flag": True}, {"flag": actual})


def test_case_and_number_rules_hold_at_every_depth() -> None:
    assert value_matches(["Paris"], ["paris"])
    assert value_matches({"trip": {"cities": [" Paris", "LYON"]}}, {"trip": {"cities": ["paris", "lyon "]}})
    assert value_matches({"n": [3]}, {"n": ["3"]}) and value_matches([3], [3.0])
    assert not value_matches(["Paris"], ["paris"], EXACT)
    assert not value_matches({"n": [3]}, {"n": ["3"]}, STRICT) and not value_matches([3], [3.5])


def test_an_object_with_a_matcher_like_key_is_a_literal() -> None:
    literal = {"filter": {"contains": "x"}}
    assert args_match(literal, {"filter": {"contains": "X"}})
    assert not args_match(literal, {"filter": "some x here"})
    assert args_match({"filter": {"$contains": "x"}}, {"filter": "some x here"})
    assert args_match({"q": {"$literal": {"$regex": "a"}}}, {"q": {"$regex": "a"}})


def test_operators() -> None:
    assert value_matches({"$regex": r"^\d+$"}, "123") and not value_matches({"$regex": r"^\d+$"}, "12a")
    assert value_matches({"$any_of": ["Paris", {"$contains": "lyon"}]}, "Lyon Part-Dieu")
    assert args_match({"unit": {"$absent": True}}, {"city": "x"})
    assert not args_match({"unit": {"$absent": True}}, {"unit": "c"})
    assert args_match({"unit": {"$optional": "c"}}, {}) and args_match({"unit": {"$optional": "c"}}, {"unit": "C"})
    assert not args_match({"unit": {"$optional": "c"}}, {"unit": "f"})
    assert not args_match({"unit": "c"}, {}) and not args_match({}, None)


def test_extra_keys_and_lists() -> None:
    assert args_match({"a": 1}, {"a": 1, "b": 2}) and not args_match({"a": 1}, {"a": 1, "b": 2}, CLOSED)
    assert not value_matches([1, 2], [2, 1]) and not value_matches([1], [1, 1])


def test_mismatch_names_the_path() -> None:
    assert (
        mismatch({"trip": {"cities": ["Paris"]}}, {"trip": {"cities": ["Rome"]}})
        == "trip.cities.0: wanted 'Paris', got 'Rome'"
    )


def test_bfcl_normalisation() -> None:
    assert normalise_text("New York, NY", "bfcl") == "newyorkny"
    assert value_matches(["San-Francisco"], ["san francisco"], MatchRules(normalise="bfcl"))


def test_unknown_operators_and_bad_operands_are_named() -> None:
    assert spec_problem({"day": {"$startswith": "fri"}}) is not None
    assert "day: unknown matcher operator '$startswith'" in (spec_problem({"day": {"$startswith": "fri"}}) or "")
    assert "not a valid regular expression" in (spec_problem({"a": {"$regex": "("}}) or "")
    assert "only key" in (spec_problem({"$contains": "a", "b": 1}) or "")
    assert spec_problem({"$any_of": []}) and spec_problem({"$absent": False}) and spec_problem({"$contains": 3})
    with pytest.raises(SpecError):
        value_matches({"$startswith": "fri"}, "friday")


def test_exact_compares_as_written_whatever_the_normalisation() -> None:
    bfcl = MatchRules(normalise="bfcl", strict_types=True)
    assert value_matches("EVENT_THREAD", " event-thread.", bfcl)  # normalised
    assert not value_matches({"$exact": "EVENT_THREAD"}, " event-thread.", bfcl)
    assert value_matches({"$exact": ["Apple", {"a": 1}]}, ["Apple", {"a": 1}], bfcl)
    assert not value_matches({"$exact": ["Apple"]}, ["apple"], bfcl)
    assert not value_matches({"$exact": True}, "True", bfcl) and value_matches({"$exact": True}, True, bfcl)


def test_parsed_reads_text_as_the_language_does() -> None:
    bfcl = MatchRules(normalise="bfcl", strict_types=True)
    java_long = {"$parsed": {"language": "java", "type": "long", "value": 42}}
    assert value_matches(java_long, "42L", bfcl) and not value_matches(java_long, "42", bfcl)
    assert not value_matches(java_long, 42, bfcl)  # the value is text, or nothing
    js_float = {"$parsed": {"language": "javascript", "type": "float", "value": 5.0}}
    assert value_matches(js_float, "5", bfcl) and value_matches(js_float, "5.0", bfcl)
    assert not value_matches(js_float, "5e0", bfcl)  # JavaScript's rule reads no exponent
    js_string = {"$parsed": {"language": "javascript", "type": "String", "value": "hello world"}}
    assert value_matches(js_string, "'Hello World'", bfcl) and value_matches(js_string, '"hello-world"', bfcl)
    assert "unknown language 'rust'" in (
        spec_problem({"$parsed": {"language": "rust", "type": "i32", "value": 1}}) or ""
    )
    assert "has no type 'long'" in (
        spec_problem({"$parsed": {"language": "javascript", "type": "long", "value": 1}}) or ""
    )
    assert "takes {language, type, value}" in (spec_problem({"$parsed": {"language": "java"}}) or "")
    assert "value.0: unknown matcher operator" in (
        spec_problem({"$parsed": {"language": "java", "type": "String", "value": [{"$nope": 1}]}}) or ""
    )


def test_parsed_reads_a_collection_by_its_item_type() -> None:
    bfcl = MatchRules(normalise="bfcl", strict_types=True, extra_keys="forbid")
    longs = {"$parsed": {"language": "java", "type": "ArrayList", "items": "long", "value": [1, 2]}}
    assert value_matches(longs, "new ArrayList<Long>(Arrays.asList(1L, 2L))", bfcl)
    assert not value_matches(longs, "new ArrayList<Long>(Arrays.asList(1, 2))", bfcl)  # "1" is no long
    assert not value_matches(longs, "new ArrayList<Long>(Arrays.asList(2L, 1L))", bfcl)
    names = {"$parsed": {"language": "javascript", "type": "array", "items": "String", "value": ["a b", "c"]}}
    assert value_matches(names, "['A-B', \"c\"]", bfcl) and value_matches(names, "new Array(ab, c)", bfcl)
    assert not value_matches(names, '["c", "a b"]', bfcl) and not value_matches(names, '"a b"', bfcl)
    options = {"$parsed": {"language": "java", "type": "HashMap", "value": {"limit": {"$any_of": [50, 50.0]}}}}
    assert value_matches(options, 'new HashMap<String, Object>() {{ put("limit", 50.0); }}', bfcl)
    assert not value_matches(options, 'new HashMap<>() {{ put("limit", 50); put("x", 1); }}', bfcl)
    assert "has no item type 'Set'" in (
        spec_problem({"$parsed": {"language": "java", "type": "Array", "items": "Set", "value": []}}) or ""
    )
    assert "takes {language, type, value}" in (
        spec_problem({"$parsed": {"language": "java", "type": "Array", "value": [], "item": "long"}}) or ""
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
specs = st.recursive(
    json_values,
    lambda children: st.one_of(
        st.builds(
            lambda k, v: {k: v},
            st.sampled_from(
                [
                    "$contains",
                    "$regex",
                    "$any_of",
                    "$absent",
                    "$optional",
                    "$literal",
                    "$exact",
                    "$parsed",
                    "$startswith",
                ]
            ),
            children | st.lists(children, max_size=3) | st.text(max_size=6),
        ),
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=4), children, max_size=3),
    ),
    max_leaves=12,
)
rules = st.builds(
    MatchRules,
    normalise=st.sampled_from(["exact", "casefold", "bfcl"]),
    strict_types=st.booleans(),
    extra_keys=st.sampled_from(["allow", "forbid"]),
)


def _has_dollar_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(str(k).startswith("$") or _has_dollar_key(v) for k, v in value.items())
    return isinstance(value, list) and any(_has_dollar_key(v) for v in value)


@settings(max_examples=500, deadline=None)
@given(specs, json_values, rules)
def test_matching_never_raises_anything_but_project_errors(spec: Any, actual: Any, r: MatchRules) -> None:
    try:
        value_matches(spec, actual, r)
    except EvalkitError:
        assert spec_problem(spec) is not None  # only a spec that load-time checking refuses may raise


@settings(max_examples=300, deadline=None)
@given(json_values, rules)
def test_a_value_matches_itself_as_a_literal(value: Any, r: MatchRules) -> None:
    assert value_matches({"$literal": value}, value, r)
    if not _has_dollar_key(value):
        assert value_matches(value, value, r)


@settings(max_examples=300, deadline=None)
@given(json_values, json_values, st.sampled_from(["exact", "casefold", "bfcl"]))
def test_literal_matching_is_symmetric_under_normalisation(a: Any, b: Any, mode: Any) -> None:
    r = MatchRules(normalise=mode, extra_keys="forbid")
    assert value_matches({"$literal": a}, b, r) == value_matches({"$literal": b}, a, r)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=10), st.sampled_from(["exact", "casefold", "bfcl"]))
def test_normalisation_is_idempotent_and_matching_follows_it(text: str, mode: Any) -> None:
    once = normalise_text(text, mode)
    assert normalise_text(once, mode) == once
    assert value_matches(text, once, MatchRules(normalise=mode))
