"""Importing Berkeley Function Calling Leaderboard (BFCL v4) cases as scenarios.

Reads the data files of the installed `bfcl-eval` package (no network). Function docs are turned
into JSON Schema the way BFCL does for function-calling models (`model_handler/utils.py`,
`convert_to_tool` with `GORILLA_TO_OPENAPI`): dotted names become underscored, `dict` is `object`,
`float` is `number` (with `format: float` and BFCL's description suffix), `tuple` is `array`, `any`
and unknown types are `string`. Possible answers become v2 checks in BFCL's terms (`types: strict`,
`strings: bfcl`, no extra arguments, exactly the expected calls, one reply). What cannot be said
exactly is either approximated and listed in the scenario's `provenance.approximations`, or the case
is skipped with the reason: nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.importers.bfcl.data import ALIASES, CATEGORIES, data_dir
from evalkit.importers.bfcl.languages import (
    LANGUAGES,
    PYTHON_KIND,
    bfcl_equal,
    item_kind,
    language_functions,
    language_key,
    spelled,
    unreadable_parameter,
)
from evalkit.importers.bfcl.multiturn import convert_multi_turn
from evalkit.importers.bfcl.schema import tool_name, tool_schema

__all__ = ["Conversion", "convert_case"]

_REFUSAL = "Sorry, none of the tools I have can do that."


@dataclass
class Conversion:
    scenario: dict[str, Any] | None
    approximations: list[str] = field(default_factory=list)
    skipped: str = ""


def _value_spec(value: Any, equal: Callable[[Any], Any] | None = None) -> Any:
    """A BFCL acceptable value as an evalkit spec; dicts hold per-key alternatives (BFCL's dict_checker),
    one level deep: the alternatives themselves are literal values (a dict inside one is compared whole),
    or, with `equal`, the specs it makes of them."""
    if isinstance(value, dict):
        spec: dict[str, Any] = {}
        for key, alts in value.items():
            alts = alts if isinstance(alts, list) else [alts]
            given = [a for a in alts if a != ""]
            given = _literal_alternatives(given) if equal is None else _alternatives_of([equal(a) for a in given])
            if given is _NOTHING:
                spec[key] = {"$optional": ""} if "" in alts else {"$absent": True}
            else:
                spec[key] = {"$optional": given} if "" in alts else given
        return spec
    if isinstance(value, list):
        return [_value_spec(v) for v in value]
    return value


_NOTHING = object()


def _literal_alternatives(alts: list[Any]) -> Any:
    return _alternatives_of([{"$literal": a} if isinstance(a, dict) else a for a in alts])


def _alternatives_of(specs: list[Any]) -> Any:
    if not specs:
        return _NOTHING
    return specs[0] if len(specs) == 1 else {"$any_of": specs}


def _alternatives(alts: list[Any], equal: Callable[[Any], Any] | None = None) -> Any:
    specs = [
        a if isinstance(a, dict) and len(a) == 1 and set(a) <= {"$exact", "$literal"} else _value_spec(a, equal)
        for a in alts
    ]
    if not specs:
        return _NOTHING
    return specs[0] if len(specs) == 1 else {"$any_of": specs}


_EMPTY = {"string": "", "any": "", "array": [], "tuple": []}  # what BFCL's "" alternative lets through


def _floats(value: Any, schema: dict[str, Any]) -> Any:
    """An int answer for a float parameter (or float array item) as a float: BFCL compares numbers by
    value once the type check passed, and an int given for a float parameter passes it."""
    kind = schema.get("type")
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    listed = kind in ("array", "tuple") and isinstance(value, list) and isinstance(schema.get("items"), dict)
    # an answer list that starts with an int lets int items through (BFCL types items by the first one)
    if listed and value and not isinstance(value[0], int):
        return [_floats(v, schema["items"]) for v in value]
    return value


# BFCL's Python types (ast_checker's PYTHON_TYPE_MAPPING): an answer of another type is a "variable"
_PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}


def _variable(given: list[Any], kind: str) -> bool:
    """BFCL's rule: when the first answer's type is not the declared one, the answer is a "variable" and
    a value is compared with it exactly, as written (an int answer for a float is read as a float)."""
    expected = _PYTHON_TYPES.get(kind)
    if not given or expected is None or type(given[0]) is expected:
        return False
    return not (expected is float and type(given[0]) is int)


def _with_float_items(value: Any, schema: dict[str, Any]) -> list[Any]:
    """An answer list of ints for a list of floats is the ints (whose type lets an int item through, as
    BFCL types items by the answer's first) and the same numbers as floats (BFCL then compares the lists
    by value: `[23.0, 45]` equals `[23, 45]`)."""
    items = schema.get("items")
    floats = isinstance(items, dict) and items.get("type") == "float"
    if floats and isinstance(value, list) and value and _is_int(value[0]):
        return [value, [float(v) if _is_int(v) else v for v in value]]
    return [value]


def _variable_items(value: Any, schema: dict[str, Any]) -> bool:
    """An answer list whose first item is not of the declared item type: BFCL types its items by that
    first item (a list of lists for a list of strings passes), then compares the list as any other.
    A `$literal` says it without the load-time check that items have the declared shape."""
    items = schema.get("items")
    kind = items.get("type") if isinstance(items, dict) else None
    return isinstance(value, list) and bool(value) and isinstance(kind, str) and _variable(value[:1], kind)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _param_spec(alts: list[Any], schema: dict[str, Any], required: bool, language: str | None = None) -> Any:
    """BFCL's possible answers of one parameter as a spec. `""` among them means "may be omitted"; BFCL's
    checker also accepts the value `""` for a string parameter then, and `[]` for an array one. In a
    Java or JavaScript case the value is text, read back as BFCL reads the declared type (`$parsed`)."""
    declared, items = schema.get("type", ""), item_kind(schema)
    kind = PYTHON_KIND[language].get(declared, "") if language else declared
    if language and items:  # the item type as BFCL's Python-typed kind, for the rules on list items below
        schema = {**schema, "items": {"type": PYTHON_KIND[language].get(items, "")}}
    given = [a for a in alts if a != ""]
    if _variable(given, kind):
        exact = [{"$exact": a} for a in given]
        empty_ok = "" in alts and (_PYTHON_TYPES[kind] is str or isinstance(given[0], str))
        spec = _alternatives(exact + ([{"$exact": ""}] if empty_ok else []))
    else:
        given = [v for a in given for v in _with_float_items(_floats(a, {**schema, "type": kind}), schema)]
        given = [{"$literal": a} if _variable_items(a, schema) else a for a in given]
        empty = _EMPTY.get(kind, _NOTHING) if "" in alts else _NOTHING
        # a Java map's or a JavaScript object's values are compared by Python's `==` (BFCL's dict_checker)
        equal = bfcl_equal if language and kind == "dict" else None
        spec = _alternatives(given + ([] if empty is _NOTHING else [empty]), equal)
    if spec is _NOTHING:
        return {"$absent": True}
    if language:
        reading = {"language": language, "type": declared} | ({"items": items} if items else {})
        spec = {"$parsed": reading | {"value": spec}}
    return {"$optional": spec} if "" in alts and not required else spec


def _call_check(
    name: str, answer: dict[str, list[Any]], function: dict[str, Any], language: str | None = None
) -> dict[str, Any] | str:
    """The check of one expected call, or why BFCL fails every output for it."""
    params = function.get("parameters", {})
    must = set(params.get("required", []))
    lacking = sorted(must - set(answer))
    if lacking:
        return f"BFCL fails every output: {name} requires {lacking}, which the possible answer does not give"
    empty = sorted(p for p, alts in answer.items() if not alts)
    if empty:
        return f"BFCL fails every output: {name}.{empty[0]} has no acceptable value in the possible answer"
    properties = params.get("properties", {})
    undeclared = sorted(p for p in answer if p not in properties)
    if any("" not in answer[p] for p in undeclared):
        needs = f"the possible answer needs {name}.{undeclared[0]}"
        return f"BFCL fails every output: {needs}, which {name} does not declare"
    # an undeclared argument the answer lets out: BFCL fails an output that gives it, as `extra_arguments` does
    arguments = {
        p: _param_spec(alts, properties[p], p in must, language) for p, alts in answer.items() if p in properties
    }
    return {"name": tool_name(name), "arguments": arguments, "extra_arguments": "forbid"}


def _prompt(case: dict[str, Any], notes: list[str]) -> tuple[str, list[str]] | str:
    """(system text, the one user turn), or why the case's prompt cannot be said so. A conversation of
    several messages is quoted, role by role, in one user turn (an approximation, noted)."""
    turns = case["question"]
    if len(turns) != 1:
        return f"{len(turns)} user turns"
    system = [m["content"] for m in turns[0] if m["role"] == "system"]
    rest = [m for m in turns[0] if m["role"] != "system"]
    if not rest or rest[-1]["role"] != "user":
        return "a prompt that does not end on a user message"
    if len(rest) == 1:
        return "\n".join(system), [rest[0]["content"]]
    notes.append(f"a conversation of {len(rest)} messages is quoted in one user turn, each line led by its role")
    quoted = "\n\n".join(f"[{m['role']}] {m['content']}" for m in rest)
    return "\n".join(system), [quoted]


def convert_case(
    category: str, case: dict[str, Any], answer: dict[str, Any] | None, folder: Path | None = None
) -> Conversion:
    """One BFCL case (and its possible answer) as a scenario; `folder`: BFCL's data, if not the package's."""
    category = ALIASES.get(category, category)
    if category.startswith("multi_turn"):
        return _multi_turn(category, case, answer, folder)
    notes: list[str] = []
    prompt = _prompt(case, notes)
    if isinstance(prompt, str):
        return Conversion(None, skipped=f"cannot say {prompt} as one scenario turn")
    system, turns = prompt
    docs = case["function"]
    functions = {f["name"]: f for f in docs}  # as BFCL declares them: their types decide how values are judged
    language = None
    if category in LANGUAGES:
        unreadable = unreadable_parameter(category, answer, docs) if answer else ""
        if unreadable:
            return Conversion(None, skipped=unreadable)
        language = language_key(category)
        docs = language_functions(category, docs)
        notes.append(f"{LANGUAGES[category]} values are text in the language's spelling, read back as BFCL reads them")
    tools = [tool_schema(f) | {"results": [{"returns": {"status": "ok"}}]} for f in docs]
    if "irrelevance" in category:
        check: dict[str, Any] = {"no_tool_calls": True}
        reference: dict[str, Any] = {"reply": _REFUSAL}
    elif category == "live_relevance":
        check = {"calls": {"any_of": [t["name"] for t in tools]}}
        reference = {"calls": [{"name": tools[0]["name"], "arguments": {}}]}
        notes.append("reference: the simulated model calls the first tool with no arguments")
    else:
        if answer is None:
            return Conversion(None, skipped="no possible answer")
        required = []
        for entry in answer["ground_truth"]:
            ((name, params),) = entry.items()
            if name not in functions:
                return Conversion(None, skipped=f"the answer calls {name!r}, which the case does not offer")
            call = _call_check(name, params, functions[name], language)
            if isinstance(call, str):
                return Conversion(None, skipped=call)
            required.append(call)
        check = {
            "calls": {"order": "unordered", "required": required, "extra_calls": "forbid"},
            "match": {"normalise": "bfcl", "strict_types": True},
        }
        reference = {"calls": [{"name": r["name"], "arguments": _reference_args(r)} for r in required]}
    scenario: dict[str, Any] = {
        "schema_version": 2,
        "id": "bfcl-" + case["id"].replace("_", "-").lower(),
        "family": CATEGORIES[category],
        "description": f"BFCL v4 {category} case {case['id']}.",
    }
    if system:
        scenario["system"] = system
    scenario |= {
        "turns": turns,
        "tools": tools,
        "end_after_calls": True,
        "max_iterations": 3,
        "reference": reference,
        "check": check,
    }
    return Conversion(scenario, approximations=notes)


def _multi_turn(category: str, case: dict[str, Any], answer: dict[str, Any] | None, folder: Path | None) -> Conversion:
    fields, notes, skipped = convert_multi_turn(case, answer, data_dir(folder), tool_schema)
    if fields is None:
        return Conversion(None, skipped=skipped)
    scenario = {
        "schema_version": 2,
        "id": "bfcl-" + case["id"].replace("_", "-").lower(),
        "family": CATEGORIES[category],
        "description": f"BFCL v4 {category} case {case['id']}.",
    } | fields
    return Conversion(scenario, approximations=notes)


def _reference_args(entry: dict[str, Any]) -> dict[str, Any]:
    """A literal call that passes the check: the first alternative, optional and absent keys left out."""

    def first(spec: Any) -> Any:
        if isinstance(spec, dict) and ("$literal" in spec or "$exact" in spec):
            return spec.get("$literal", spec.get("$exact"))
        if isinstance(spec, dict) and "$parsed" in spec:
            parsed = spec["$parsed"]
            return spelled(first(parsed["value"]), parsed["language"], parsed["type"], parsed.get("items", ""))
        if isinstance(spec, dict) and "$any_of" in spec:
            return first(spec["$any_of"][0])
        if isinstance(spec, dict):
            return {
                k: first(v)
                for k, v in spec.items()
                if not (isinstance(v, dict) and ("$optional" in v or "$absent" in v))
            }
        if isinstance(spec, list):
            return [first(v) for v in spec]
        return spec

    return first(entry["arguments"])  # type: ignore[no-any-return]
