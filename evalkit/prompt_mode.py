"""Prompt-mode tool calling: tools described in the system prompt, calls parsed out of the text.

This is the harness's own, strict format: a reply that is one JSON object
`{"name": ..., "arguments": {...}}` (or a list of them), optionally inside `<tool_call>` tags.
Anything looser (calls inside prose, fenced blocks, XML dialects) is the `rescue_parse` guard's job,
so that rescuing stays a measured intervention rather than a hidden default.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.chat import ChatRequest, Message, ToolCall, ToolSpec, parse_arguments

__all__ = ["apply_prompt_mode", "called_name", "parse_strict_calls", "render_tool_prompt", "tool_result_message"]

_OPEN, _CLOSE = "<tool_call>", "</tool_call>"
# a reply that opens like a call object: pretty-printed grammar output has whitespace before "name"
_CALL_START = re.compile(r'^\[?\s*\{\s*"name"\s*:')
_NAME_KEY = '"name"'
_SPACES = re.compile(r"\s*")  # matched at one position: one forward run, nothing to backtrack into


def render_tool_prompt(tools: list[ToolSpec]) -> str:
    lines = [
        "You can call these tools:",
        *(f"- {t.name}: {t.description} Parameters (JSON schema): {json.dumps(t.parameters)}" for t in tools),
        "",
        'To call a tool, reply with only a JSON object: {"name": "<tool name>", "arguments": {...}}.',
        "If no tool is needed, reply in plain text.",
    ]
    return "\n".join(lines)


def tool_result_message(call: ToolCall, content: str) -> Message:
    """How a tool's result goes back to a model that has no tool role: a user message."""
    return Message(role="user", content=f"Result of {call.name}: {content}", origin="mock")


def _as_wire_message(message: Message) -> Message:
    if message.role == "tool":
        return Message(role="user", content=f"Result of {message.name}: {message.content}", origin=message.origin)
    if message.role == "assistant" and message.tool_calls:
        calls = [
            {"name": c.name, "arguments": c.arguments if c.arguments is not None else c.raw_arguments}
            for c in message.tool_calls
        ]
        text = json.dumps(calls[0] if len(calls) == 1 else calls)
        return Message(role="assistant", content=text, origin=message.origin)
    return message


def apply_prompt_mode(request: ChatRequest) -> ChatRequest:
    """Move the request's tools into the system prompt; send no tool API fields at all."""
    if not request.tools:
        return request
    prompt = render_tool_prompt(request.tools)
    messages = [_as_wire_message(m) for m in request.messages]
    if messages and messages[0].role == "system":
        messages[0] = messages[0].model_copy(update={"content": messages[0].content + "\n\n" + prompt})
    else:
        messages.insert(0, Message(role="system", content=prompt, origin="harness"))
    return request.model_copy(update={"messages": messages, "tools": [], "tool_choice": None})


def _call_from_object(obj: Any, index: int) -> ToolCall | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    raw = obj.get("arguments", obj.get("parameters", {}))
    args, error = parse_arguments(raw if isinstance(raw, (str, dict)) else json.dumps(raw))
    raw_text = raw if isinstance(raw, str) else None
    return ToolCall(id=f"call_{index}", name=obj["name"], arguments=args, raw_arguments=raw_text, parse_error=error)


def _untag(text: str) -> tuple[str, bool]:
    """The reply without its `<tool_call>` tags (first opening to last closing), and whether it had them.

    Plain string tests: the regex this replaces backtracked quadratically on a long run of spaces.
    """
    stripped = text.strip()
    if len(stripped) >= len(_OPEN) + len(_CLOSE) and stripped.startswith(_OPEN) and stripped.endswith(_CLOSE):
        return stripped[len(_OPEN) : -len(_CLOSE)].strip(), True
    return stripped, False


def _after_spaces(text: str, at: int) -> int:
    match = _SPACES.match(text, at)
    return match.end() if match else at


def called_name(text: str) -> str | None:
    """The first `"name": "NAME"` in `text` (NAME not empty), as `re.search(r'"name"\\s*:\\s*"([^"]+)"')`.

    Scanned forward once (each whitespace run and name is read at most twice): model output is
    untrusted and may be long, so no backtracking pattern reads it.
    """
    at = text.find(_NAME_KEY)
    while at != -1:
        colon = _after_spaces(text, at + len(_NAME_KEY))
        if text.startswith(":", colon):
            quote = _after_spaces(text, colon + 1)
            end = text.find('"', quote + 1) if text.startswith('"', quote) else -1
            if end > quote + 1:
                return text[quote + 1 : end]
        at = text.find(_NAME_KEY, at + 1)
    return None


def parse_strict_calls(text: str) -> list[ToolCall]:
    """Calls in the harness's own format, or [] when the reply is prose."""
    body, tagged = _untag(text)
    if not body.startswith(("{", "[")):
        return []
    try:
        value = json.loads(body)
    # ValueError: not JSON, or an integer past Python's digit limit; RecursionError: nesting too deep
    except (ValueError, RecursionError):
        if tagged or _CALL_START.match(body):
            # clearly meant as a call, but broken (often cut off by max_tokens): keep it as a malformed call
            name = called_name(body)
            if name:
                return [ToolCall(id="call_0", name=name, raw_arguments=body, parse_error="invalid JSON")]
        return []
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_object(item, i) for i, item in enumerate(items)]
    return [c for c in calls if c is not None] if all(c is not None for c in calls) else []
