"""BFCL multi-turn cases (base, miss_func, miss_param, long_context) as v2 multi-turn scenarios.

Each BFCL turn becomes a turn object. Its ground-truth calls (Python call strings such as
`mv(source='a', destination='b')`) become the turn's reference calls, with positional arguments named
from the backend method's signature. A turn whose ground truth is empty is the one where a datum is
missing: its check is `no_tool_calls` (the model must ask, not act). The other turns are checked by
`state_as_reference` on BFCL's own stateful backends (`module:Class` mocks), as BFCL's checker
compares backend state, and the turn's reference results must be among the model's results so far
(BFCL's `response_checker`; see `evalkit.judge.turns`).
A miss_func turn with no question is the one where BFCL adds the withheld functions: it becomes a
turn with BFCL's own prompt for that moment and `tools_added`. Every class is built from the case's
initial state (an empty one too: BFCL calls `_load_scenario` on every stateful class), with BFCL's
`long_context` option in the long_context category.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from typing import Any

from evalkit.importers.bfcl.data import FunctionDoc, read_lines

__all__ = ["convert_multi_turn"]


def _class_paths(classes: list[str]) -> dict[str, str] | str:
    """Each class's module, or why a class has none (BFCL's checker knows only its own backends)."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    unknown = [name for name in classes if name not in CLASS_FILE_PATH_MAPPING]
    if unknown:
        return f"unknown BFCL backend class {unknown[0]!r} (known: {', '.join(sorted(CLASS_FILE_PATH_MAPPING))})"
    return {name: CLASS_FILE_PATH_MAPPING[name] for name in classes}


def _function_docs(module_path: str, data: Any) -> list[dict[str, Any]]:
    return read_lines(data / "multi_turn_func_doc" / f"{module_path.rsplit('.', 1)[1]}.json", FunctionDoc)


def _parse_call(text: str, methods: dict[str, Any]) -> dict[str, Any]:
    """`name(a, b=1)` as {name, arguments}, positional arguments named from the method's signature."""
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain call: {text}")
    name = node.func.id
    params = [p for p in inspect.signature(methods[name]).parameters if p != "self"]
    arguments = {params[i]: ast.literal_eval(arg) for i, arg in enumerate(node.args)}
    arguments |= {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return {"name": name, "arguments": arguments}


def convert_multi_turn(
    case: dict[str, Any], answer: dict[str, Any] | None, data: Any, tool_schema: Any
) -> tuple[dict[str, Any] | None, list[str], str]:
    """(scenario fields, approximations, reason it was skipped)."""
    if answer is None:
        return None, [], "no possible answer"
    from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC as added_prompt
    from bfcl_eval.constants.executable_backend_config import STATELESS_CLASSES

    truth: list[list[str]] = answer["ground_truth"]
    if len(truth) != len(case["question"]):
        return None, [], f"{len(case['question'])} turns but {len(truth)} ground-truth turns"
    paths = _class_paths(case.get("involved_classes", []))
    if isinstance(paths, str):
        return None, [], paths
    excluded = set(case.get("excluded_function", []))
    tools, methods = [], {}
    for class_name, module_path in paths.items():
        try:
            cls = getattr(importlib.import_module(module_path), class_name)
        except ImportError as exc:
            return None, [], f"BFCL's {class_name} backend cannot be imported ({exc})"
        for doc in _function_docs(module_path, data):
            if doc["name"] not in excluded:
                if not callable(getattr(cls, doc["name"], None)):
                    return None, [], f"BFCL's {class_name} has no method {doc['name']!r} its function docs name"
                tools.append(tool_schema(doc))
                methods[doc["name"]] = getattr(cls, doc["name"])
    turns = []
    missed = {int(k): v for k, v in case.get("missed_function", {}).items()}
    for index, (messages, calls) in enumerate(zip(case["question"], truth, strict=True)):
        users = [m["content"] for m in messages if m["role"] == "user"]
        if not messages and index in missed:
            users = [added_prompt]
        elif len(users) != len(messages) or not users:
            return None, [], "a turn with no user message or with other roles"
        try:
            reference = [_parse_call(text, methods) for text in calls]
        except (ValueError, KeyError, SyntaxError) as exc:
            return None, [], f"cannot read a ground-truth call ({exc})"
        check = {"state_as_reference": True} if calls else {"no_tool_calls": True}
        turn: dict[str, Any] = {"user": "\n".join(users), "reference": reference, "check": check}
        if index in missed:
            turn["tools_added"] = missed[index]
        turns.append(turn)
    options = {"long_context": True} if "long_context" in case["id"] else {}
    state = [
        {"class": f"{module}:{name}", "config": case.get("initial_config", {}).get(name, {})}
        | ({"options": options} if options and name not in STATELESS_CLASSES else {})
        for name, module in paths.items()
    ]
    n_calls = sum(len(t) for t in truth)
    fields = {
        "turns": turns,
        "tools": tools,
        "state": state,
        "max_iterations": min(100, n_calls + 3 * len(turns)),
        "reference": {"calls": []},
        "check": {"state_as_reference": True},
    }
    return fields, [], ""
