"""Model outputs generated from BFCL's possible answers, for every case: each answer, each alternative, each
omission of an optional argument, and each answer with one controlled mutation, applied at every slot it
fits (every argument, every item, every call). Both checkers judge every one (tests/bfcl/test_agreement*).

Value mutations cover the three kinds of difference a checker can get wrong: types (an int as a float or as
text, a float as text, a boolean as text or as a number, text as a number, a list of ints as floats, a value
nested one level deeper), string normalisation (case, spaces, BFCL's dropped punctuation, inside lists and
objects too) and values (a wrong value, null, empty, an item dropped, added or moved, a key added or
dropped). Call mutations change the calls (an extra argument, one left out, a call twice, calls reversed, a
call dropped, another function). For Java and JavaScript cases, whose values are text in the language's
spelling, the spellings BFCL reads one way or another (`5` and `5.0`, `5L`, `5f`, `5n`, `true` and `True`,
`"x"` quoted, spaces around) are mutations too."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from evalkit.importers.bfcl.schema import tool_name

Output = list[dict[str, Any]]
Slot = tuple[int, str]  # (call index, argument name)

__all__ = [
    "CALL_MUTATIONS",
    "LANGUAGE_MUTATIONS",
    "VALUE_MUTATIONS",
    "Output",
    "collection_outputs",
    "first_values",
    "outputs",
]


def _given(alts: list[Any]) -> list[Any]:
    return [a for a in alts if a != ""]


def _answer(truth: list[dict[str, Any]], pick: dict[Slot, Any] | None = None, omit: Slot | None = None) -> Output:
    pick = pick or {}
    output: Output = []
    for i, entry in enumerate(truth):
        ((name, params),) = entry.items()
        args = {}
        for p, alts in params.items():
            if (i, p) == omit:
                continue
            if (i, p) in pick:
                args[p] = pick[(i, p)]
            elif _given(alts):
                args[p] = _given(alts)[0]
        output.append({tool_name(name): args})
    copied: Output = json.loads(json.dumps(output))
    return copied


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _messy(text: str) -> str:
    """Text BFCL's normalisation makes equal to `text` (spaces, `,./-_*^`, case), unless it is compared exactly."""
    return " " + text.upper().replace(" ", " - ") + "."


def _wrong(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int | float):
        return v + 1
    if isinstance(v, str):
        return v + " zz"
    if isinstance(v, list):
        return [*v, "zz"]
    return {**v, "zz": 1} if isinstance(v, dict) else "zz"


Mutation = Callable[[Any], Any]  # a new value, or None: the mutation does not fit this value
VALUE_MUTATIONS: dict[str, Mutation] = {
    "int_as_float": lambda v: float(v) if _is_int(v) else None,
    "int_as_string": lambda v: str(v) if _is_int(v) else None,
    "float_as_int": lambda v: int(v) if isinstance(v, float) and v.is_integer() else None,
    "float_as_string": lambda v: str(v) if isinstance(v, float) else None,
    "bool_as_string": lambda v: str(v) if isinstance(v, bool) else None,
    "bool_as_lower_string": lambda v: str(v).lower() if isinstance(v, bool) else None,
    "bool_as_int": lambda v: int(v) if isinstance(v, bool) else None,
    "string_as_number": lambda v: 7 if isinstance(v, str) else None,
    "string_as_bool": lambda v: True if isinstance(v, str) else None,
    "string_as_list": lambda v: [v] if isinstance(v, str) else None,
    "unnormalised_string": lambda v: _messy(v) if isinstance(v, str) and v else None,
    "upper_cased_string": lambda v: v.upper() if isinstance(v, str) and v.upper() != v else None,
    "string_with_punctuation": lambda v: v[:1] + "_-./" + v[1:] if isinstance(v, str) and v else None,
    "string_with_quotes": lambda v: f"'{v}'" if isinstance(v, str) and v else None,
    "wrong_value": lambda v: _wrong(v) if v is not None else None,
    "null": lambda v: None,
    "empty_string": lambda v: "" if isinstance(v, str) and v else None,
    "empty_list": lambda v: [] if isinstance(v, list) and v else None,
    "empty_object": lambda v: {} if isinstance(v, dict) and v else None,
    "list_as_string": lambda v: json.dumps(v) if isinstance(v, list | dict) else None,
    "nested_deeper": lambda v: [v],
    "ints_in_list_as_floats": lambda v: (
        [float(x) if _is_int(x) else x for x in v] if isinstance(v, list) and any(_is_int(x) for x in v) else None
    ),
    "floats_in_list_as_ints": lambda v: (
        [int(x) if isinstance(x, float) and x.is_integer() else x for x in v]
        if isinstance(v, list) and any(isinstance(x, float) and x.is_integer() for x in v)
        else None
    ),
    "lower_cased_list": lambda v: (
        [x.lower() if isinstance(x, str) else x for x in v]
        if isinstance(v, list) and any(isinstance(x, str) and x.lower() != x for x in v)
        else None
    ),
    "unnormalised_list": lambda v: (
        [_messy(x) if isinstance(x, str) and x else x for x in v]
        if isinstance(v, list) and any(isinstance(x, str) and x for x in v)
        else None
    ),
    "list_reversed": lambda v: v[::-1] if isinstance(v, list) and v[::-1] != v else None,
    "list_item_dropped": lambda v: v[:-1] if isinstance(v, list) and v else None,
    "list_item_doubled": lambda v: [*v, v[-1]] if isinstance(v, list) and v else None,
    "object_key_added": lambda v: {**v, "zz": "zz"} if isinstance(v, dict) else None,
    "object_key_dropped": lambda v: dict(list(v.items())[:-1]) if isinstance(v, dict) and v else None,
    "object_values_unnormalised": lambda v: (
        {k: _messy(x) if isinstance(x, str) and x else x for k, x in v.items()}
        if isinstance(v, dict) and any(isinstance(x, str) and x for x in v.values())
        else None
    ),
}


def _spellings(v: str) -> list[str]:
    """Other texts of a Java/JavaScript value: how a number, a boolean or a string may be written."""
    out = [v + " ", " " + v, v.upper(), _messy(v), f'"{v}"', f"'{v}'", f'"{v}', v + "\n"]
    body = v.rstrip("LlFfn")
    if body.lstrip("-").replace(".", "", 1).isdigit():
        out += [body, body + ".0", body + "L", body + "f", body + "n", "0" + body, "+" + body, body + "e0"]
        if "." in body:
            out += [body.rstrip("0").rstrip("."), body + "0"]
    if v in ("true", "false"):
        out += [v.capitalize(), "1" if v == "true" else "0", v.upper()]
    return [s for s in out if s != v]


LANGUAGE_MUTATIONS: dict[str, Callable[[Any], list[Any]]] = {
    "spelling": lambda v: _spellings(v) if isinstance(v, str) else [],
}


def _slots(out: Output) -> list[tuple[int, str, Any]]:
    return [
        (i, param, value) for i, entry in enumerate(out) for args in entry.values() for param, value in args.items()
    ]


def _set(out: Output, i: int, param: str, value: Any) -> Output:
    new = copy.deepcopy(out)
    next(iter(new[i].values()))[param] = value
    return new


def _value_mutations(base: Output, language: bool) -> Iterator[tuple[str, Output]]:
    for i, param, value in _slots(base):
        for kind, mutate in VALUE_MUTATIONS.items():
            changed = mutate(value)
            if changed is not None or kind == "null":
                yield f"{kind} {i}.{param}", _set(base, i, param, changed)
        if language:
            for k, text in enumerate(LANGUAGE_MUTATIONS["spelling"](value)):
                yield f"spelling#{k} {i}.{param}", _set(base, i, param, text)
        if isinstance(value, list):  # one level down: the first item of each kind, mutated
            for kind in ("int_as_float", "unnormalised_string", "wrong_value", "null", "bool_as_string"):
                at = next((j for j, x in enumerate(value) if VALUE_MUTATIONS[kind](x) is not None), None)
                if at is not None:
                    item = copy.deepcopy(value)
                    item[at] = VALUE_MUTATIONS[kind](item[at])
                    yield f"{kind} {i}.{param}[{at}]", _set(base, i, param, item)
        if isinstance(value, dict):
            for key, x in value.items():
                for kind in ("int_as_float", "unnormalised_string", "wrong_value", "null", "int_as_string"):
                    changed = VALUE_MUTATIONS[kind](x)
                    if changed is not None or kind == "null":
                        yield f"{kind} {i}.{param}.{key}", _set(base, i, param, {**value, key: changed})


def _other_function(out: Output, i: int, functions: list[dict[str, Any]]) -> Output:
    ((name, args),) = out[i].items()
    others = [tool_name(f["name"]) for f in functions if tool_name(f["name"]) != name]
    new = copy.deepcopy(out)
    new[i] = {others[0] if others else name + "_x": args}
    return new


CALL_MUTATIONS: dict[str, Callable[[Output, int, list[dict[str, Any]]], Output | None]] = {
    "extra_argument": lambda out, i, f: _set(out, i, "evalkit_extra", "x"),
    "right_call_twice": lambda out, i, f: [*out, copy.deepcopy(out[i])],
    "call_dropped": lambda out, i, f: out[:i] + out[i + 1 :],
    "wrong_function_name": _other_function,
    "no_arguments": lambda out, i, f: [*out[:i], {next(iter(out[i])): {}}, *out[i + 1 :]],
    "calls_reversed": lambda out, i, f: out[::-1] if i == 0 and len(out) > 1 else None,
}


def _call_mutations(base: Output, functions: list[dict[str, Any]]) -> Iterator[tuple[str, Output]]:
    for i in range(len(base)):
        for kind, mutate in CALL_MUTATIONS.items():
            changed = mutate(base, i, functions)
            if changed is not None:
                yield f"{kind} {i}", changed
        for param in next(iter(base[i].values())):
            dropped = copy.deepcopy(base)
            del next(iter(dropped[i].values()))[param]
            yield f"dropped_argument {i}.{param}", dropped


def outputs(
    case: dict[str, Any], answer: dict[str, Any] | None, language: bool = False
) -> Iterator[tuple[str, Output]]:
    """(label, output) pairs; for (ir)relevance cases: no call, a call of each offered tool (with no
    arguments), a call of a tool it does not offer, and two calls."""
    if answer is None:
        names = [tool_name(f["name"]) for f in case["function"]]
        yield "no call", []
        for name in names:
            yield f"a call of {name}", [{name: {}}]
        yield "a call of an unknown tool", [{"evalkit_unknown": {}}]
        if names:
            yield "two calls", [{names[0]: {}}, {names[-1]: {"x": 1}}]
        return
    truth = answer["ground_truth"]
    base = _answer(truth)
    yield "answer", base
    for i, entry in enumerate(truth):
        ((_, params),) = entry.items()
        for param, alts in params.items():
            for k, alt in enumerate(_given(alts)[1:], start=1):
                yield f"alternative {i}.{param}#{k}", _answer(truth, pick={(i, param): alt})
            if _given(alts):
                yield f"omitted {i}.{param}", _answer(truth, omit=(i, param))
    yield from _value_mutations(base, language)
    yield from _call_mutations(base, case["function"])
    yield "no call", []


# Java and JavaScript collections: text a model may write for a list or a map, right or wrong
_JAVA_ITEM_NAMES = {"integer": "int", "long": "long", "String": "String", "any": "Object", "boolean": "boolean"}


def _element(x: Any, language: str, items: str, quote: str) -> str:
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int | float):
        suffix = {"long": "L", "float": "f"}.get(items, "") if language == "java" and quote else ""
        return f"{x}{suffix}"  # quote "" also marks numbers written without their type's suffix
    if isinstance(x, list | dict):
        return _containers(x, language, "array" if isinstance(x, list) else "dict", "", quote)[0]
    return f"{quote}{x}{quote}"


def _containers(value: Any, language: str, kind: str, items: str, quote: str) -> list[str]:
    """`value` in each container spelling (BFCL's parsers read some, not others)."""
    if isinstance(value, dict):
        pairs = [(k, _element(v, language, "", quote or '"')) for k, v in value.items()]
        if language == "java":
            puts = " ".join(f'put("{k}", {v});' for k, v in pairs)
            return [
                f"new HashMap<String, Object>() {{{{ {puts} }}}}",
                f"new HashMap<>() {{{{{puts}}}}}",
                f"new HashMap<String, String>() {{ {{ {puts} }} }}",
                "Map.of(" + ", ".join(f'"{k}", {v}' for k, v in pairs) + ")",
            ]
        return [
            "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}",
            "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}",
            "{ " + " ,".join(f"'{k}' : {v}" for k, v in pairs) + " }",
            "new Object({" + ", ".join(f"{k}: {v}" for k, v in pairs) + "})",
        ]
    texts = [_element(x, language, items, quote) for x in value]
    joined, tight = ", ".join(texts), ",".join(texts)
    if language == "java":
        name = _JAVA_ITEM_NAMES.get(items, items)
        return [
            f"new {name}[]{{{joined}}}",
            f"new {name}[] {{ {tight} }}",
            f"new ArrayList<>(Arrays.asList({joined}))",
            f"new ArrayList<{name}>() {{{{ " + " ".join(f"add({t});" for t in texts) + " }}",
            f"Arrays.asList({joined})",
            f"List.of({joined})",
        ]
    return [f"[{joined}]", f" [ {tight} ] ", f"new Array({joined})", f"Array.of({joined})"]


def _list_variants(v: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"answer": v, "reversed": v[::-1], "item_dropped": v[:-1], "item_added": [*v, v[-1]]}
    out |= {"item_wrong": [_wrong(v[0]), *v[1:]], "scalar": v[0], "empty": []}
    if isinstance(v[0], str) and v[0]:
        out |= {"item_upper_cased": [v[0].upper(), *v[1:]], "comma_in_item": [v[0] + ",zz", *v[1:]]}
    return out


def _map_variants(v: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"answer": v, "empty": {}, "key_added": {**v, "zz": "zz"}}
    if v:
        key, first = next(iter(v.items()))
        out |= {"key_dropped": dict(list(v.items())[1:]), "value_wrong": {**v, key: _wrong(first)}}
        if isinstance(first, str) and first:
            out |= {"value_unnormalised": {**v, key: _messy(first)}, "value_upper": {**v, key: first.upper()}}
        if _is_int(first):
            out |= {"value_as_float": {**v, key: float(first)}, "value_as_text": {**v, key: str(first)}}
        if isinstance(first, bool):
            out |= {"value_as_number": {**v, key: int(first)}, "value_as_text": {**v, key: str(first).lower()}}
    return out


def first_values(alternatives: dict[str, Any]) -> dict[str, Any]:
    """A map answer (each key's acceptable values) as one map: each key's first value, optional keys left out."""
    listed = {k: a if isinstance(a, list) else [a] for k, a in alternatives.items()}
    return {k: _given(a)[0] for k, a in listed.items() if _given(a)}


def collection_outputs(
    case: dict[str, Any], answer: dict[str, Any], base: Output, language: str
) -> Iterator[tuple[str, Output]]:
    """For each argument the answer gives as a list or a map: the answer and variants of it (reordered, an
    item dropped, added or wrong, a scalar, empty; a key dropped or added, a value wrong or respelled), each
    written in every container and quoting spelling (`_containers`), in place of that argument's text."""
    declared = {f["name"]: f["parameters"].get("properties", {}) for f in case["function"]}
    for i, entry in enumerate(answer["ground_truth"]):
        ((name, params),) = entry.items()
        for param, alts in params.items():
            given = _given(alts)
            schema = declared.get(name, {}).get(param, {})
            if not given or not isinstance(given[0], list | dict) or not given[0]:
                continue
            items = schema.get("items", {}).get("type", "") if isinstance(schema.get("items"), dict) else ""
            kind = schema.get("type", "")
            variants = _list_variants(given[0]) if isinstance(given[0], list) else _map_variants(first_values(given[0]))
            for label, value in variants.items():
                quotes = ('"', "'", "") if isinstance(value, list | dict) else ('"', "")
                for quote in quotes:
                    texts = (
                        _containers(value, language, kind, items, quote)
                        if isinstance(value, list | dict)
                        else [_element(value, language, items, quote)]
                    )
                    for k, text in enumerate(texts):
                        yield f"collection {label} {quote or 'bare'}#{k} {i}.{param}", _set(base, i, param, text)
