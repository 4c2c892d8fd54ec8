"""Request rules shared by the real backends: what to do with a constraint or a tool_choice a backend lacks.

A strategy that needs a missing feature must be reported as `unsupported`, never run without it, so
these helpers raise `UnsupportedFeature`. The one exception is a constraint marked `optional`
(the grammar strategy's hybrid mode): it is dropped and the completion says so.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from evalkit.chat import ChatRequest, Constraint, ToolCall, parse_arguments
from evalkit.errors import BackendError, UnsupportedFeature

__all__ = ["check_tool_choice", "constraint_body", "normalise_finish", "settle_constraint", "tool_call"]

# provider finish/stop reasons in the OpenAI vocabulary; anything else is kept as the provider said it
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "tool": "tool_calls",  # llama-server's legacy spelling
}


def normalise_finish(reason: object) -> str:
    if not isinstance(reason, str) or not reason:
        return "unknown"
    return _FINISH.get(reason, reason)


def settle_constraint(
    request: ChatRequest, *, backend: str, kinds: Collection[str], exclusive_with_tools: bool = False
) -> tuple[Constraint | None, bool]:
    """The constraint to send, and whether an optional one was dropped.

    `exclusive_with_tools`: the backend refuses a custom constraint beside tools that may be called
    (llama-server: "Cannot use custom grammar constraints with tools").
    """
    constraint = request.constraint
    if constraint is None:
        return None, False
    feature: str
    if constraint.kind not in kinds:
        feature, problem = constraint.kind, f"{backend} cannot constrain output with a {constraint.kind}"
    elif exclusive_with_tools and request.tools and request.tool_choice != "none":
        feature, problem = "grammar_with_tools", f"{backend} cannot combine a {constraint.kind} with tools"
    else:
        return constraint, False
    if constraint.optional:
        return None, True
    raise UnsupportedFeature(f"{problem} (feature {feature!r})")


def constraint_body(constraint: Constraint) -> str | dict[str, Any]:
    """The grammar text or the schema object; a constraint without one is a bug upstream."""
    body = constraint.grammar if constraint.kind == "grammar" else constraint.json_schema
    if body is None:
        raise BackendError(f"a {constraint.kind} constraint arrived without its {constraint.kind}")
    return body


def check_tool_choice(request: ChatRequest, *, backend: str, allowed: Collection[str]) -> str | None:
    """The tool_choice to send (None: send nothing), or `UnsupportedFeature` for one the backend lacks."""
    choice = request.tool_choice
    if choice is None or not request.tools:
        return None  # with no tools there is nothing to choose, and some APIs reject the field
    if choice not in allowed:
        raise UnsupportedFeature(f"{backend} has no tool_choice={choice!r} (feature 'tool_choice_{choice}')")
    return choice


def tool_call(call_id: object, name: object, raw: object) -> ToolCall:
    """A normalised call; arguments that do not parse are kept verbatim with the reason."""
    value: str | dict[str, Any] | None
    # a list or a number is kept as JSON text, and parse_arguments flags it
    value = raw if raw is None or isinstance(raw, (str, dict)) else json.dumps(raw)
    arguments, error = parse_arguments(value)
    kept = None
    if error is not None:
        kept = value if isinstance(value, str) else json.dumps(value)
    return ToolCall(
        id=str(call_id or ""), name=str(name or ""), arguments=arguments, raw_arguments=kept, parse_error=error
    )
