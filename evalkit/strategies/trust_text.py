"""`trust_text`: no guard. A text reply ends the turn; tool calls are executed as they come.

This is ADR-013's approach A with trust on: believe the model when it chooses to answer in text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalkit.chat import Completion
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, TurnView

__all__ = ["TrustText"]


@dataclass
class TrustText(BaseStrategy):
    name: ClassVar[str] = "trust_text"

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        return Execute(reply.tool_calls) if reply.tool_calls else Accept(reply.text)
