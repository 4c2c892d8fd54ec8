"""Matching one call against a v2 call check, on top of `evalkit.scenario.matching`.

Argument values go through `evalkit.scenario.matching.mismatch` (its `$`-operators, including `$optional` and
`$absent`, and its rules at every depth). This module adds what belongs to a *call*: `extra_arguments`
(refusing keys nobody named, at every depth) and, with strict types, the tool's JSON Schema types
for every given value. Only v2 scenarios use it (see `evalkit.judge.calls.uses_v2`); v1 scenarios keep
`evalkit.judge.verdict`' v1 path.

Where evalkit deliberately differs from BFCL's checker, the difference is a named rule in
`DELIBERATE_DIFFERENCES` with its own test (tests/bfcl/test_named_rules.py).
"""

from __future__ import annotations

from typing import Any, Literal

from evalkit.scenario.matching import MatchRules, mismatch

__all__ = ["DELIBERATE_DIFFERENCES", "arguments_match", "type_ok"]

DELIBERATE_DIFFERENCES = {
    "cut_off_call_is_malformed": "a call whose arguments do not parse is a malformed call; BFCL counts output it "
    "cannot decode as 'no call' (so it passes irrelevance)",
    "normalise_at_every_depth": "strings are normalised inside nested lists and objects too; BFCL normalises only "
    "one level deep",
    "types_at_every_depth": "with strict types, values are checked against the parameter's JSON Schema at every "
    "depth; BFCL checks one level of array items",
    "one_to_one_is_a_maximum_matching": "required calls are matched to the model's calls by a maximum one-to-one "
    "matching; BFCL matches greedily in answer order, so it can fail an output "
    "that has a valid assignment",
    "degenerate_reply_fails": "a reply evalkit flags as degenerate (chat-template tokens, a loop of lines) fails the "
    "run; BFCL asks only whether the reply held a call, so on irrelevance it passes",
    "relevance_needs_an_offered_tool": "on live_relevance a call passes only if it calls a tool the case offers; BFCL "
    "passes any decodable call, even of a function that does not exist",
    "answer_breaks_its_schema": "a case whose possible answer needs a value its own function schema forbids (a "
    "boolean for a required string parameter) is not imported: its reference call, which must pass its check, "
    "would break the schema evalkit holds it to; BFCL passes only that schema-breaking value (an optional one "
    "is imported, and judged by BFCL's rule: the answer's type decides)",
    "no_call_where_bfcl_expects_none": "in a multi-turn case, a turn whose ground truth has no call (the datum or the "
    "function is missing) fails if the model calls a tool there; BFCL's checker "
    "defines that check (multi_turn_irrelevance_checker) but never calls it, so it "
    "passes such a call",
}

_JSON_TYPES: dict[str, Any] = {"string": str, "boolean": bool, "array": list, "object": dict}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_ok(value: Any, schema: dict[str, Any], *, item: bool = False) -> bool:
    """Does `value` have the JSON Schema `type` of `schema`, at every depth (items, properties)? A
    `number` with `format: float` accepts an int only as a parameter itself, not as an array item
    (BFCL converts an int given for a float parameter, not one inside a float list)."""
    kind = schema.get("type")
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        whole = isinstance(value, int) and item and schema.get("format") == "float"
        return _number(value) and not whole
    if kind == "null":
        return value is None
    expected = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
    if expected is None:
        return True  # no type, or a union: not this switch's business
    if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(type_ok(v, schema["items"], item=True) for v in value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return all(type_ok(v, props[k]) for k, v in value.items() if isinstance(props.get(k), dict))
    return True


def _literals(spec: Any) -> list[Any]:
    """The values a parameter's spec names, in order (its alternatives; none for a pattern)."""
    if isinstance(spec, dict) and len(spec) == 1:
        ((key, operand),) = spec.items()
        if key == "$optional":
            return _literals(operand)
        if key == "$any_of" and isinstance(operand, list):
            return [value for option in operand for value in _literals(option)]
        if key in ("$literal", "$exact"):
            return [operand]
        if isinstance(key, str) and key.startswith("$"):
            return []
    return [spec]


def _answer_typed(value: Any, prop: dict[str, Any], answers: list[Any]) -> bool:
    """BFCL's rule where the declared type fails: the first answer's type decides; in a list, an item
    passes with its declared type or the type of the first item of some answer list."""
    items = prop.get("items")
    if isinstance(value, list) and prop.get("type") == "array" and isinstance(items, dict):
        return any(
            isinstance(answer, list)
            and all(type_ok(v, items, item=True) or (answer and type(v) is type(answer[0])) for v in value)
            for answer in answers
        )
    return bool(answers) and type(answers[0]) is type(value)


def _typed(arguments: dict[str, Any], spec: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Every required parameter is given, and every given one has its declared type or its answer's
    (BFCL's rule: the answer's type decides, e.g. `null` where a number is declared but `null` is the
    answer)."""
    if any(name not in arguments for name in schema.get("required", [])):
        return False
    declared = schema.get("properties")
    props: dict[str, Any] = declared if isinstance(declared, dict) else {}
    for name, value in arguments.items():
        prop = props.get(name)
        answers = _literals(spec[name]) if name in spec else []
        if isinstance(prop, dict) and not type_ok(value, prop) and not _answer_typed(value, prop, answers):
            return False
    return True


def arguments_match(
    spec: dict[str, Any],
    arguments: dict[str, Any] | None,
    rules: MatchRules,
    *,
    extra: Literal["allow", "forbid"] = "allow",
    schema: dict[str, Any] | None = None,
) -> bool:
    """The call's arguments match `spec` under `rules`; with `extra: forbid` no key the spec does not
    name is allowed (at any depth); with strict types every required parameter is given and every
    value has its JSON Schema type (or its answer's)."""
    if arguments is None:
        return False
    if rules.strict_types and schema is not None and not _typed(arguments, spec, schema):
        return False
    call_rules = MatchRules(
        normalise=rules.normalise,
        strict_types=rules.strict_types,
        extra_keys="forbid" if extra == "forbid" else rules.extra_keys,
    )
    return mismatch(spec, arguments, call_rules) is None
