"""Matching tool-call arguments against scenario specs: one function, for mocks and for checks.

A *spec* is a JSON value. Anything that is not an operator is a literal, compared with the actual
value under `MatchRules`; the same rules hold at every nesting depth:

- **strings** compare after normalisation: `casefold` (default: strip, then case-fold), `exact`
  (as written) or `bfcl` (BFCL's checker: drop spaces and ``,./-_*^``, lower-case, ``'`` → ``"``);
- **numbers** compare by value (`3` matches `3.0`); unless `strict_types`, a numeric string matches
  the number it spells (`"3"` matches `3`, either way round). With `strict_types`, an integer matches
  only an integer and a string never matches a number (a float spec accepts an int, as in BFCL);
- **booleans** match only booleans, **null** only null (`true` never matches `1`, `"1"` or `1.0`);
- **lists** match element by element, in order, with the same length;
- **objects**: every key of the spec must be present (keys are exact) and match; keys the spec
  does not name are allowed, or refused when `extra_keys="forbid"`.

An *operator* is an object with exactly one key starting with ``$``:

- ``{$contains: "x"}``  the actual string (or, for another type, its JSON text) contains ``x``
  after normalisation;
- ``{$regex: "..."}``   `re.search` on that text (case-insensitive unless the mode is `exact`);
- ``{$any_of: [spec, ...]}``  any of the specs matches;
- ``{$absent: true}``   as an object key's spec: the key must not be present;
- ``{$optional: spec}``  the key may be absent; if present it must match ``spec``;
- ``{$literal: value}``  ``value`` as a literal, even an object whose keys start with ``$``;
- ``{$exact: value}``  ``value`` as a literal whose strings compare exactly as written, whatever the
  normalisation (BFCL compares an answer of another type than the declared one so: a "variable");
- ``{$parsed: {language: java, type: long, value: spec}}``  the actual value is text in the language's
  spelling; read back as BFCL reads that type (`evalkit.scenario.language_values`), it matches ``spec``;
  a collection type takes its item type too (``{language: java, type: Array, items: String, value: spec}``).

So a literal object may have any keys (``{contains: x}`` is just an object with a key ``contains``).
`spec_problem` finds an unknown operator, a bad regex or a malformed operand before anything runs
(scenario loading calls it); matching a spec it would refuse raises `SpecError`.

Public API: `MatchRules`, `mismatch` (the first difference, as a readable string, or None),
`value_matches`, `args_match`, `spec_problem`, `normalise_text`, `mentions`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from evalkit.errors import SpecError
from evalkit.scenario.language_values import LANGUAGE_TYPES, read_value

__all__ = [
    "DEFAULT_RULES",
    "OPERATORS",
    "MatchRules",
    "Normalisation",
    "args_match",
    "mentions",
    "mismatch",
    "normalise_text",
    "spec_problem",
    "value_matches",
]

Normalisation = Literal["exact", "casefold", "bfcl"]
OPERATORS = ("$contains", "$regex", "$any_of", "$absent", "$optional", "$literal", "$exact", "$parsed")


@dataclass(frozen=True)
class MatchRules:
    normalise: Normalisation = "casefold"
    strict_types: bool = False
    extra_keys: Literal["allow", "forbid"] = "allow"


DEFAULT_RULES = MatchRules()


class _Missing:
    """The 'value' of an object key that is not there (only `$absent`/`$optional` accept it)."""

    def __repr__(self) -> str:
        return "(absent)"


MISSING = _Missing()
_BFCL_DROPPED = re.compile(r"[ ,./\-_*^]")
_NUMBER_TEXT = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


def normalise_text(text: str, mode: Normalisation = "casefold") -> str:
    if mode == "exact":
        return text
    if mode == "bfcl":
        return _BFCL_DROPPED.sub("", text).lower().replace("'", '"')
    return text.strip().casefold()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _operator(spec: Any) -> tuple[str, Any] | None:
    if isinstance(spec, dict) and len(spec) == 1:
        key = next(iter(spec))
        if isinstance(key, str) and key.startswith("$"):
            return key, spec[key]
    return None


def spec_problem(spec: Any, where: str = "") -> str | None:
    """The first unusable part of a spec, as '<path>: <problem>', or None when it is valid."""
    at = f"{where}: " if where else ""
    if isinstance(spec, list):
        return next((p for i, s in enumerate(spec) if (p := spec_problem(s, _join(where, i)))), None)
    if not isinstance(spec, dict):
        return None
    dollar = [k for k in spec if isinstance(k, str) and k.startswith("$")]
    if dollar and len(spec) > 1:
        return f"{at}an operator ({dollar[0]}) must be the object's only key; use $literal for such data"
    op = _operator(spec)
    if op is None:
        return next((p for k, s in spec.items() if (p := spec_problem(s, _join(where, k)))), None)
    name, operand = op
    problem = _operand_problem(name, operand, at)
    if problem or name not in ("$any_of", "$optional", "$parsed"):
        return problem
    if name == "$parsed":
        return spec_problem(operand["value"], _join(_join(where, name), "value"))
    return spec_problem(operand, _join(where, name))


def _operand_problem(name: str, operand: Any, at: str) -> str | None:
    """What is wrong with one operator's own operand (not with specs nested inside it)."""
    if name not in OPERATORS:
        return f"{at}unknown matcher operator {name!r} (known: {', '.join(OPERATORS)})"
    if name in ("$contains", "$regex") and not isinstance(operand, str):
        return f"{at}{name} needs a string, not {type(operand).__name__}"
    if name == "$regex":
        try:
            re.compile(operand)
        except re.error as exc:
            return f"{at}$regex {operand!r} is not a valid regular expression ({exc})"
    if name == "$any_of" and (not isinstance(operand, list) or not operand):
        return f"{at}$any_of needs a non-empty list of specs"
    if name == "$absent" and operand is not True:
        return f"{at}$absent takes the value true"
    if name == "$parsed":
        return _parsed_problem(operand, at)
    return None


_PARSED_KEYS = {"language", "type", "items", "value"}


def _parsed_problem(operand: Any, at: str) -> str | None:
    if not isinstance(operand, dict) or not {"language", "type", "value"} <= set(operand) <= _PARSED_KEYS:
        return f"{at}$parsed takes {{language, type, value}} and, for a collection, items"
    types = LANGUAGE_TYPES.get(operand["language"]) if isinstance(operand["language"], str) else None
    if types is None:
        return f"{at}$parsed: unknown language {operand['language']!r} (known: {', '.join(LANGUAGE_TYPES)})"
    if not isinstance(operand["type"], str) or operand["type"] not in types:
        return f"{at}$parsed: {operand['language']} has no type {operand['type']!r} (known: {', '.join(types)})"
    if "items" in operand and operand["items"] not in types:
        return f"{at}$parsed: {operand['language']} has no item type {operand['items']!r} (known: {', '.join(types)})"
    return None


def _join(where: str, part: str | int) -> str:
    return f"{where}.{part}" if where else str(part)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _scalar_differs(spec: Any, actual: Any, rules: MatchRules) -> bool:
    if isinstance(spec, bool) or isinstance(actual, bool) or spec is None or actual is None:
        return not (type(spec) is type(actual) and spec == actual)
    if _is_number(spec) and _is_number(actual):
        if rules.strict_types and isinstance(spec, int) and not isinstance(actual, int):
            return True
        return bool(spec != actual)
    if isinstance(spec, str) and isinstance(actual, str):
        return normalise_text(spec, rules.normalise) != normalise_text(actual, rules.normalise)
    if rules.strict_types:
        return True
    text, number = (spec, actual) if isinstance(spec, str) else (actual, spec)
    if not (isinstance(text, str) and _is_number(number)):
        return True
    text = text.strip()
    if not _NUMBER_TEXT.fullmatch(text):
        return True
    parsed = int(text) if text.lstrip("-").isdigit() else float(text)
    return bool(parsed != number)


def _operator_mismatch(name: str, operand: Any, actual: Any, rules: MatchRules, where: str) -> str | None:
    at = f"{where}: " if where else ""
    if name == "$absent":
        return None if actual is MISSING else f"{at}should be absent, got {actual!r}"
    if name == "$optional":
        return None if actual is MISSING else mismatch(operand, actual, rules, where)
    if name == "$any_of":
        misses = [mismatch(option, actual, rules, where) for option in operand]
        return None if any(m is None for m in misses) else f"{at}{actual!r} matches none of {operand!r}"
    if actual is MISSING:
        return f"{at}missing"
    if name == "$literal":
        return mismatch({"$literal": operand}, actual, rules, where)
    if name == "$exact":
        return _literal_mismatch(operand, actual, replace(rules, normalise="exact"), where)
    if name == "$parsed":
        if not isinstance(actual, str):
            return f"{at}wanted {operand['language']} text, got {actual!r}"
        read = read_value(actual, operand["language"], operand["type"], operand.get("items"))
        return mismatch(operand["value"], read, rules, where)
    text = _text(actual)
    if name == "$contains":
        found = normalise_text(operand, rules.normalise) in normalise_text(text, rules.normalise)
        return None if found else f"{at}{text!r} does not contain {operand!r}"
    flags = 0 if rules.normalise == "exact" else re.IGNORECASE
    found = re.search(operand, text, flags) is not None
    return None if found else f"{at}{text!r} does not match /{operand}/"


def mismatch(spec: Any, actual: Any, rules: MatchRules = DEFAULT_RULES, where: str = "") -> str | None:
    """The first difference between `spec` and `actual` ('<path>: <what>'), or None if they match."""
    at = f"{where}: " if where else ""
    op = _operator(spec)
    if op is not None:
        name, operand = op
        if name == "$literal":
            return _literal_mismatch(operand, actual, rules, where)
        problem = _operand_problem(name, operand, at)
        if problem:
            raise SpecError(problem)
        return _operator_mismatch(name, operand, actual, rules, where)
    return _literal_mismatch(spec, actual, rules, where, nested_specs=True)


def _literal_mismatch(spec: Any, actual: Any, rules: MatchRules, where: str, nested_specs: bool = False) -> str | None:
    """Compare structurally; `nested_specs` lets values inside be operators (false under $literal)."""
    at = f"{where}: " if where else ""
    inner = mismatch if nested_specs else _plain
    if actual is MISSING:
        return f"{at}missing"
    if isinstance(spec, dict):
        if not isinstance(actual, dict):
            return f"{at}wanted an object, got {actual!r}"
        for key, value in spec.items():
            problem = inner(value, actual.get(key, MISSING), rules, _join(where, key))
            if problem:
                return problem
        extra = sorted(str(k) for k in actual if k not in spec)
        return f"{at}unexpected keys {extra}" if extra and rules.extra_keys == "forbid" else None
    if isinstance(spec, list):
        if not isinstance(actual, list) or len(actual) != len(spec):
            return f"{at}wanted a list of {len(spec)}, got {actual!r}"
        return next(
            (
                p
                for i, (s, a) in enumerate(zip(spec, actual, strict=True))
                if (p := inner(s, a, rules, _join(where, i)))
            ),
            None,
        )
    if isinstance(actual, (dict, list)) or _scalar_differs(spec, actual, rules):
        return f"{at}wanted {spec!r}, got {actual!r}"
    return None


def _plain(spec: Any, actual: Any, rules: MatchRules, where: str) -> str | None:
    return _literal_mismatch(spec, actual, rules, where)


def value_matches(spec: Any, actual: Any, rules: MatchRules = DEFAULT_RULES) -> bool:
    return mismatch(spec, actual, rules) is None


def args_match(spec: dict[str, Any], arguments: dict[str, Any] | None, rules: MatchRules = DEFAULT_RULES) -> bool:
    """A call's arguments (None: unparseable, never a match) against an object spec."""
    return arguments is not None and mismatch(spec, arguments, rules) is None


def mentions(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()
