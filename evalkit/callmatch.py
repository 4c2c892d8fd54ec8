"""Matching one call against a v2 call check: optional, absent and extra arguments, type strictness
and string normalisation at every nesting depth.

Only v2 scenarios use it (see `evalkit.callcheck.uses_v2`); v1 scenarios keep `evalkit.matching`, so
their verdicts are exactly what they were. The v2 rules exist to say what BFCL's checker says (`strings: bfcl`,
`types: strict`); where evalkit deliberately differs from BFCL the difference is a named rule in
`DELIBERATE_DIFFERENCES` with its own test (tests/bfcl/).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DELIBERATE_DIFFERENCES", "MatchRules", "arguments_match", "normalise", "type_ok", "value_matches_v2"]

StringMode = Literal["exact", "casefold", "bfcl"]
TypeMode = Literal["lenient", "strict"]

DELIBERATE_DIFFERENCES = {
    "cut_off_call_is_malformed": "a call whose arguments do not parse is a malformed call; BFCL counts output it "
                                 "cannot decode as 'no call' (so it passes irrelevance)",
    "normalise_at_every_depth": "strings are normalised inside nested lists and objects too; BFCL normalises only "
                                "one level deep",
    "types_at_every_depth": "with types: strict, values are checked against the parameter's JSON Schema at every "
                            "depth; BFCL checks one level of array items",
    "one_to_one_is_a_maximum_matching": "required calls are matched to the model's calls by a maximum one-to-one "
                                        "matching; BFCL matches greedily in answer order, so it can fail an output "
                                        "that has a valid assignment",
}

_BFCL_STRIP = re.compile(r"[ ,./\-_*^]")
_MATCHERS = ("contains", "any_of", "regex", "object")


@dataclass(frozen=True)
class MatchRules:
    """How argument values compare: `types` strict follows the tool's JSON Schema (an integer rejects
    5.0 and "5", a number accepts an integer); `strings` says how strings are normalised first."""

    types: TypeMode = "lenient"
    strings: StringMode = "casefold"


def normalise(text: str, mode: StringMode) -> str:
    if mode == "exact":
        return text
    if mode == "casefold":
        return text.strip().casefold()
    # BFCL's standardize_string: drop spaces and ,./-_*^, lower-case, single quotes become double
    return _BFCL_STRIP.sub("", text).lower().replace("'", '"')


def _is_matcher(spec: Any) -> bool:
    return isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in _MATCHERS


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _matcher_matches(spec: dict[str, Any], actual: Any, rules: MatchRules) -> bool:
    (kind, expected), = spec.items()
    if kind == "any_of":
        return any(value_matches_v2(option, actual, rules) for option in expected)
    if kind == "object":
        if not isinstance(actual, dict):
            return False
        return arguments_match(expected.get("required", {}), actual, rules, optional=expected.get("optional", {}),
                               extra="forbid")
    text = actual if isinstance(actual, str) else json.dumps(actual)
    if kind == "contains":
        return normalise(str(expected), rules.strings) in normalise(text, rules.strings)
    flags = 0 if rules.strings == "exact" else re.IGNORECASE
    return re.search(str(expected), text, flags) is not None


def value_matches_v2(spec: Any, actual: Any, rules: MatchRules) -> bool:
    """Does `actual` match `spec` (a literal or a matcher) under `rules`, at every depth?"""
    if _is_matcher(spec):
        return _matcher_matches(spec, actual, rules)
    if isinstance(spec, bool) or isinstance(actual, bool):
        return isinstance(spec, bool) and isinstance(actual, bool) and spec == actual
    if _number(spec):
        if _number(actual):
            return float(spec) == float(actual)
        if isinstance(actual, str) and rules.types == "lenient":
            try:
                return float(actual) == float(spec)  # "3" for 3: a type slip, forgiven only when lenient
            except ValueError:
                return False
        return False
    if isinstance(spec, str):
        return isinstance(actual, str) and normalise(spec, rules.strings) == normalise(actual, rules.strings)
    if isinstance(spec, list):
        return (isinstance(actual, list) and len(spec) == len(actual)
                and all(value_matches_v2(s, a, rules) for s, a in zip(spec, actual, strict=True)))
    if isinstance(spec, dict):
        return (isinstance(actual, dict) and set(spec) == set(actual)
                and all(value_matches_v2(v, actual[k], rules) for k, v in spec.items()))
    return bool(spec == actual)


_JSON_TYPES: dict[str, Any] = {"string": str, "boolean": bool, "array": list, "object": dict}


def type_ok(value: Any, schema: dict[str, Any]) -> bool:
    """Does `value` have the JSON Schema `type` of `schema`, at every depth (items, properties)?"""
    kind = schema.get("type")
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return _number(value)
    if kind == "null":
        return value is None
    expected = _JSON_TYPES.get(kind) if isinstance(kind, str) else None
    if expected is None:
        return True  # no type, or a union: not this switch's business
    if not isinstance(value, expected) or (expected is not bool and isinstance(value, bool)):
        return False
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return all(type_ok(item, schema["items"]) for item in value)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return all(type_ok(v, props[k]) for k, v in value.items() if isinstance(props.get(k), dict))
    return True


def arguments_match(required: dict[str, Any], arguments: dict[str, Any] | None, rules: MatchRules, *,
                    optional: dict[str, Any] | None = None, absent: list[str] | None = None,
                    extra: Literal["allow", "forbid"] = "allow",
                    schema: dict[str, Any] | None = None) -> bool:
    """Every `required` key is present and matches; an `optional` key may be left out but must match
    when given; `absent` keys must not appear; with `extra: forbid`, no other key may appear; with
    strict types every given value has its parameter's JSON Schema type (from `schema`)."""
    if arguments is None:
        return False
    optional = optional or {}
    if any(key in arguments for key in absent or []):
        return False
    if extra == "forbid" and any(key not in required and key not in optional for key in arguments):
        return False
    if rules.types == "strict" and schema is not None:
        props = schema.get("properties", {})
        if not all(type_ok(v, props[k]) for k, v in arguments.items() if isinstance(props.get(k), dict)):
            return False
    if not all(key in arguments and value_matches_v2(spec, arguments[key], rules) for key, spec in required.items()):
        return False
    return all(value_matches_v2(spec, arguments[key], rules) for key, spec in optional.items() if key in arguments)
