"""BFCL multi-turn cases (multi_turn_miss_param) as v2 multi-turn scenarios.

Each BFCL turn becomes a turn object. Its ground-truth calls (Python call strings such as
`mv(source='a', destination='b')`) become the turn's reference calls, with positional arguments named
from the backend method's signature. A turn whose ground truth is empty is the one where a datum is
missing: its check is `no_tool_calls` (the model must ask, not act). The other turns are checked by
`state_as_reference` on BFCL's own stateful backends (`module:Class` mocks), as BFCL's checker
compares backend state; BFCL also compares execution results, which is listed as an approximation.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from typing import Any

__all__ = ["convert_multi_turn"]


def _class_paths(classes: list[str]) -> dict[str, str]:
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    return {name: CLASS_FILE_PATH_MAPPING[name] for name in classes}


def _function_docs(module_path: str, data: Any) -> list[dict[str, Any]]:
    doc_file = data / "multi_turn_func_doc" / f"{module_path.rsplit('.', 1)[1]}.json"
    return [json.loads(line) for line in doc_file.read_text(encoding="utf-8").splitlines() if line.strip()]


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
    truth: list[list[str]] = answer["ground_truth"]
    if len(truth) != len(case["question"]):
        return None, [], f"{len(case['question'])} turns but {len(truth)} ground-truth turns"
    paths = _class_paths(case["involved_classes"])
    excluded = set(case.get("excluded_function", []))
    tools, methods = [], {}
    for class_name, module_path in paths.items():
        try:
            cls = getattr(importlib.import_module(module_path), class_name)
        except ImportError as exc:
            return None, [], f"BFCL's {class_name} backend cannot be imported ({exc})"
        for doc in _function_docs(module_path, data):
            if doc["name"] not in excluded:
                tools.append(tool_schema(doc))
                methods[doc["name"]] = getattr(cls, doc["name"])
    turns = []
    for messages, calls in zip(case["question"], truth, strict=True):
        users = [m["content"] for m in messages if m["role"] == "user"]
        if len(users) != len(messages) or not users:
            return None, [], "a turn with no user message or with other roles"
        try:
            reference = [_parse_call(text, methods) for text in calls]
        except (ValueError, KeyError, SyntaxError) as exc:
            return None, [], f"cannot read a ground-truth call ({exc})"
        check = {"state_as_reference": True} if calls else {"no_tool_calls": True}
        turns.append({"user": "\n".join(users), "reference": reference, "check": check})
    state = [
        {"class": f"{module}:{name}", "config": case.get("initial_config", {}).get(name, {})}
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
    notes = ["BFCL also requires each turn's execution results to appear among the model's; evalkit checks state only"]
    return fields, notes, ""
