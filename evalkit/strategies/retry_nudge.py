"""`retry_nudge`: Forge's default validator. Text while tools are offered is a failed tool call.

The model gets a corrective user message and another try, up to `max_retries` per run. When the
retries run out the last text is accepted (what Forge's proxy returns) or, with
`on_exhausted: fail`, the run fails explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from evalkit.chat import Completion
from evalkit.strategies.base import BaseStrategy, Decision, Retry, Stop, TurnView

__all__ = ["DEFAULT_NUDGE", "RetryNudge"]

# Paraphrase of Forge's nudge (src/forge/prompts/nudges.py, per notes/seed-origins.md).
DEFAULT_NUDGE = (
    "Your previous reply was not a valid tool call. A tool call is required here, not free text. "
    "Call one of the available tools now."
)


@dataclass
class RetryNudge(BaseStrategy):
    name: ClassVar[str] = "retry_nudge"
    max_retries: int = 3  # Forge's default (its eval harness uses 5)
    message: str = DEFAULT_NUDGE
    on_exhausted: Literal["accept", "fail"] = "accept"

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.used = 0

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        # with no tools offered, text is the only answer there is: nothing to nudge
        if reply.tool_calls or not view.tools:
            return None
        if self.used < self.max_retries:
            self.used += 1
            return Retry(self.message, f"text reply while tools are offered (nudge {self.used}/{self.max_retries})")
        # exhausted: Forge's proxy hands the text on (None: accepted); `fail` makes the loss explicit
        if self.on_exhausted == "fail":
            return Stop("failed", f"still text after {self.max_retries} nudges")
        return None
