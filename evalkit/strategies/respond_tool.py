"""`respond_tool`: Forge's synthetic `respond(message)` tool (ADR-013 approach B).

The tool is added to every request with tools. A lone `respond` call is the model's answer; with
real calls beside it, `respond` is dropped and the real calls run. Bare text is nudged back to
tool calling (up to `max_nudges`, then accepted). `respond` never reaches the mocks, so a scenario's
check never sees it as a tool call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalkit.chat import ChatRequest, Completion, ToolSpec
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, Retry, TurnView

__all__ = ["RESPOND_TOOL", "RespondTool"]

RESPOND_TOOL = ToolSpec(
    name="respond",
    description="Reply to the user in plain language: small talk, clarifying questions, answers that "
                "need no other tool, and final reports.",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)

NUDGE = "Reply by calling a tool. To talk to the user, call respond(message=...)."


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
            return self._nudge("respond called without a readable message")
        return self._nudge("bare text instead of respond") if self.used < self.max_nudges else None

    def _nudge(self, reason: str) -> Decision | None:
        if self.used >= self.max_nudges:
            return None
        self.used += 1
        return Retry(self.message, f"{reason} (nudge {self.used}/{self.max_nudges})")
