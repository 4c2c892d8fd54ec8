"""Model outputs generated from BFCL's possible answers: each answer, each alternative, and each with one
controlled mutation. Both checkers judge every one (tests/bfcl/test_agreement.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from evalkit.importers.bfcl.schema import tool_name

Output = list[dict[str, Any]]

__all__ = ["MUTATIONS", "Output", "outputs"]


def _given(alts: list[Any]) -> list[Any]:
    return [a for a in alts if a != ""]


def _answer(truth: list[dict[str, Any]], pick: dict[tuple[int, str], Any] | None = None, omit: Any = None) -> Output:
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


def _first_slot(out: Output, test: Any) -> tuple[dict[str, Any], str] | None:
    for entry in out:
        for _, args in entry.items():
            for param, value in args.items():
                if test(value):
                    return args, param
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _mutate(base: Output, kind: str, truth: list[dict[str, Any]], functions: list[dict[str, Any]]) -> Output | None:
    """`base` with one controlled mutation, or None when the case has nothing to mutate that way."""
    out = copy.deepcopy(base)
    if kind == "int_as_float" and (slot := _first_slot(out, _is_int)):
        slot[0][slot[1]] = float(slot[0][slot[1]])
    elif kind == "int_as_string" and (slot := _first_slot(out, _is_int)):
        slot[0][slot[1]] = str(slot[0][slot[1]])
    elif kind == "float_as_int" and (slot := _first_slot(out, lambda v: isinstance(v, float) and v.is_integer())):
        slot[0][slot[1]] = int(slot[0][slot[1]])
    elif kind == "string_as_number" and (slot := _first_slot(out, lambda v: isinstance(v, str))):
        slot[0][slot[1]] = 7
    elif kind == "int_in_float_array" and (
        slot := _first_slot(out, lambda v: isinstance(v, list) and any(isinstance(x, float) for x in v))
    ):
        value = slot[0][slot[1]]
        i = next(i for i, x in enumerate(value) if isinstance(x, float))
        value[i] = int(value[i]) if value[i].is_integer() else value[i]
        if value[i].__class__ is not int:
            return None
    elif kind == "null" and (slot := _first_slot(out, lambda v: True)):
        slot[0][slot[1]] = None
    elif kind == "empty_string" and (slot := _first_slot(out, lambda v: isinstance(v, str))):
        slot[0][slot[1]] = ""
    elif kind == "empty_list" and (slot := _first_slot(out, lambda v: isinstance(v, list))):
        slot[0][slot[1]] = []
    elif kind == "extra_argument" and out:
        next(iter(out[0].values()))["evalkit_extra"] = "x"
    elif kind == "dropped_argument" and (slot := _first_slot(out, lambda v: True)):
        del slot[0][slot[1]]
    elif kind == "right_call_twice" and out:
        out.append(copy.deepcopy(out[0]))
    elif kind == "wrong_function_name" and out:
        ((name, args),) = out[0].items()
        others = [tool_name(f["name"]) for f in functions if tool_name(f["name"]) != name]
        out[0] = {others[0] if others else name + "_x": args}
    elif kind == "unnormalised_string" and (slot := _first_slot(out, lambda v: isinstance(v, str) and v)):
        slot[0][slot[1]] = " " + slot[0][slot[1]].upper().replace(" ", " - ") + "."
    else:
        return None
    return out


MUTATIONS = [
    "int_as_float",
    "int_as_string",
    "float_as_int",
    "string_as_number",
    "int_in_float_array",
    "null",
    "empty_string",
    "empty_list",
    "extra_argument",
    "dropped_argument",
    "right_call_twice",
    "wrong_function_name",
    "unnormalised_string",
]


def outputs(case: dict[str, Any], answer: dict[str, Any] | None) -> Iterator[tuple[str, Output]]:
    """(label, output) pairs; for (ir)relevance cases: no call, and a call of an offered tool."""
    if answer is None:
        yield "no call", []
        yield "a call", [{tool_name(case["function"][0]["name"]): {}}]
        return
    truth = answer["ground_truth"]
    base = _answer(truth)
    yield "answer", base
    for i, entry in enumerate(truth):
        ((_, params),) = entry.items()
        for param, alts in params.items():
            for k, alt in enumerate(_given(alts)[1:], start=1):
                yield f"alternative {param}#{k}", _answer(truth, pick={(i, param): alt})
            if _given(alts):
                yield f"omitted {param}", _answer(truth, omit=(i, param))
    for kind in MUTATIONS:
        mutated = _mutate(base, kind, truth, case["function"])
        if mutated is not None:
            yield kind, mutated
