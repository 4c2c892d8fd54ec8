"""The `Strategy` protocol: how a guard shapes requests and judges replies.

A run holds a *stack* of strategies (`[respond_tool, retry_nudge]`). Before each model call every
strategy's `prepare` may reshape the request, in order. After the call the strategies `judge` the
reply in order; the first one that returns a decision wins, except `Rewrite`, which replaces the
reply (rescued calls, say) and lets the rest of the stack judge the new one. A reply no strategy
claims is taken at face value: tool calls are executed, text is accepted as the answer (that is
`trust_text`).

Strategy instances are built fresh for every run, so they may keep per-run counters on `self`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol, runtime_checkable

from evalkit.backends.base import Feature
from evalkit.chat import ChatRequest, Completion, ExecutedCall, Message, ToolCall, ToolMode, ToolSpec

__all__ = ["Accept", "Decision", "Execute", "Retry", "Rewrite", "Stop", "Strategy", "TurnView"]


@dataclass(frozen=True)
class Execute:
    """Run these tool calls against the scenario's mocks and call the model again."""

    calls: list[ToolCall]
    note: str | None = None  # set when a guard changed what the model did (a rescue, a strip)


@dataclass(frozen=True)
class Accept:
    """Take `text` as the model's answer to the current user turn."""

    text: str
    note: str | None = None


@dataclass(frozen=True)
class Retry:
    """Reject the reply: append it, then a corrective user `message`, and call again."""

    message: str
    reason: str


@dataclass(frozen=True)
class Rewrite:
    """The reply is really `reply` (e.g. tool calls rescued from text): later strategies judge that.

    Unlike the other decisions this does not end judging; it is recorded as an intervention.
    """

    reply: Completion
    note: str


@dataclass(frozen=True)
class Stop:
    """End the run now: `escalated` (handed back to a human) or `failed` (an explicit failure)."""

    outcome: Literal["escalated", "failed"]
    reason: str


Decision = Execute | Accept | Retry | Rewrite | Stop


@dataclass
class TurnView:
    """What a strategy may see of the run: history, offered tools, executed calls, the mode."""

    messages: list[Message]
    tools: list[ToolSpec]
    mode: ToolMode
    supports: Callable[[Feature], bool]
    executed: list[ExecutedCall] = field(default_factory=list)
    mutating_tools: frozenset[str] = frozenset()
    notes: list[tuple[str, str]] = field(default_factory=list)
    # the tools of the request as the whole stack prepared it (scenario tools plus e.g. `respond`);
    # set by the loop before each call, so `judge` knows what was really offered
    offered: list[ToolSpec] = field(default_factory=list)

    @property
    def user_message(self) -> str:
        """The latest message the scenario's user wrote (guard nudges excluded)."""
        for message in reversed(self.messages):
            if message.role == "user" and message.origin == "scenario":
                return message.content
        return ""

    def tool_names(self) -> set[str]:
        return {tool.name for tool in self.tools}

    def note(self, strategy: str, text: str) -> None:
        """Record an intervention made while preparing a request (e.g. what `auto` chose)."""
        self.notes.append((strategy, text))


@runtime_checkable
class Strategy(Protocol):
    """A guard. `name` is its registry name; `requires` lists backend features it cannot do without."""

    name: ClassVar[str]

    def requires(self, mode: ToolMode) -> set[Feature]: ...

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest: ...

    def judge(self, reply: Completion, view: TurnView) -> Decision | None: ...


class BaseStrategy:
    """Defaults for the optional parts of the protocol: needs nothing, changes nothing, judges nothing."""

    name: ClassVar[str] = "base"

    def requires(self, mode: ToolMode) -> set[Feature]:
        return set()

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        return request

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        return None
