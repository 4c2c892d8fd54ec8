"""`respond_tool`: Forge's synthetic `respond(message)` tool (ADR-013 approach B).

The tool is added to every request with tools. A lone `respond` call is the model's answer; with
real calls beside it, `respond` is dropped and the real calls run. Bare text is nudged back to
tool calling (up to `max_nudges`, then accepted). `respond` never reaches the mocks, so a scenario's
check never sees it as a tool call. A `respond` without a readable message (arguments that do not
parse, or no string `message`) is nudged too; once the nudges are spent it is still the model's
reply, never a call of an unknown tool: the message is read out of the arguments as far as it goes
(`salvaged_message`) and accepted, and that reply is judged like any other (degenerate output,
reply checks), so a cut-off but readable greeting can pass and JSON debris cannot.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import ClassVar

from evalkit.chat import ChatRequest, Completion, ToolCall, ToolSpec
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, Retry, TurnView

__all__ = ["RESPOND_TOOL", "RespondTool"]

RESPOND_TOOL = ToolSpec(
    name="respond",
    description="Reply to the user in plain language: small talk, clarifying questions, answers that "
    "need no other tool, and final reports.",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)

NUDGE = "Reply by calling a tool. To talk to the user, call respond(message=...)."
_MESSAGE_START = re.compile(r'"message"\s*:\s*"')


def salvaged_message(call: ToolCall) -> str:
    """The text of a `respond` call without a readable message: the message as far as it goes."""
    if call.arguments is not None:  # parsed, but no string `message`: its first string, or its JSON
        texts = [v for v in call.arguments.values() if isinstance(v, str)]
        return texts[0] if texts else json.dumps(call.arguments)
    raw = call.raw_arguments or ""
    start = _MESSAGE_START.search(raw)
    if start is None:
        return raw
    body = raw[start.end() :]
    end = re.search(r'(?<!\\)"', body)
    chunk = body[: end.start()] if end else body.rstrip("\\")
    try:
        return str(json.loads(f'"{chunk}"'))
    except json.JSONDecodeError:
        return chunk


@dataclass
class RespondTool(BaseStrategy):
    name: ClassVar[str] = "respond_tool"
    max_nudges: int = 3
    message: str = NUDGE

    def __post_init__(self) -> None:
        self.used = 0

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        if not request.tools or any(t.name == RESPOND_TOOL.name for t in request.tools):
            return request
        return request.model_copy(update={"tools": [*request.tools, RESPOND_TOOL]})

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        if not view.tools:
            return None
        responds = [c for c in reply.tool_calls if c.name == RESPOND_TOOL.name]
        others = [c for c in reply.tool_calls if c.name != RESPOND_TOOL.name]
        if others:
            return Execute(others, note="dropped respond beside real calls") if responds else None
        if responds:
            message = (responds[0].arguments or {}).get("message")
            if isinstance(message, str):
                return Accept(message)
            nudged = self._nudge("respond called without a readable message")
            if nudged is None:
                return Accept(salvaged_message(responds[0]), note="respond without a readable message accepted")
            return nudged
        return self._nudge("bare text instead of respond") if self.used < self.max_nudges else None

    def _nudge(self, reason: str) -> Decision | None:
        if self.used >= self.max_nudges:
            return None
        self.used += 1
        return Retry(self.message, f"{reason} (nudge {self.used}/{self.max_nudges})")
