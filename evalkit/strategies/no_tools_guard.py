"""`no_tools_guard`: Cline's guard. Consecutive text-only replies are mistakes; at the limit, escalate.

Each text-only reply increments a consecutive-mistake counter and gets Cline's corrective message;
any tool call resets the counter. When the counter reaches `limit` the run ends as `escalated`
(handed back to the user), which is reported as such rather than as a silent failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalkit.chat import Completion
from evalkit.strategies.base import BaseStrategy, Decision, Retry, Stop, TurnView

__all__ = ["NO_TOOLS_USED", "NoToolsGuard"]

# Cline's formatResponse.noToolsUsed opening line (src/core/prompts/responses.ts, per notes/seed-origins.md).
NO_TOOLS_USED = (
    "[ERROR] You did not use a tool in your previous response! Please retry with a tool use. "
    "If the task is done or you need more information from the user, say so by calling a tool."
)


@dataclass
class NoToolsGuard(BaseStrategy):
    name: ClassVar[str] = "no_tools_guard"
    limit: int = 3  # Cline's maxConsecutiveMistakes default
    message: str = NO_TOOLS_USED

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError("limit must be >= 1")
        self.mistakes = 0

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        if reply.tool_calls:
            self.mistakes = 0
            return None
        if not view.tools:
            return None
        self.mistakes += 1
        if self.mistakes >= self.limit:
            return Stop("escalated", f"{self.mistakes} consecutive replies without a tool call")
        return Retry(self.message, f"no tool used (mistake {self.mistakes}/{self.limit})")
