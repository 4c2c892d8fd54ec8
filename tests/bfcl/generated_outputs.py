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

__all__ = ["CALL_MUTATIONS", "LANGUAGE_MUTATIONS", "VALUE_MUTATIONS", "Output", "outputs"]


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
