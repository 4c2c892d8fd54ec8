"""The `Strategy` protocol: how a guard shapes requests and judges replies.

A run holds a *stack* of strategies (`[respond_tool, retry_nudge]`). Before each model call every
strategy's `prepare` may reshape the request, in order. After the call the strategies `judge` the
reply in order; the first one that returns a decision wins, except `Rewrite`, which replaces the
reply (rescued calls, say) and lets the rest of the stack judge the new one. A reply no strategy
claims is taken at face value: tool calls are executed, text is accepted as the answer (that is
`trust_text`).

Strategy instances are built fresh for every run, so they may keep per-run counters on `self`. A
strategy that keeps track of what ran (Forge's `Guardrails.record`) may define `after_execute`, which
the loop calls with each batch of executed calls; it is optional, so plugins need not define it.
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
    rescued: bool = False  # the calls were read out of the reply's text: recorded as a rescue, not a strip


@dataclass(frozen=True)
class Accept:
    """Take `text` as the model's answer to the current user turn."""

    text: str
    note: str | None = None


@dataclass(frozen=True)
class Retry:
    """Reject the reply: append it, then the corrective `message`, and call again.

    `role` is the channel of the correction: `user`, a user message after the reply (as text); `tool`,
    the reply's calls as made, each answered by a tool result that carries `message` (Forge's channel
    for a call of an unknown tool or with malformed arguments; a reply without calls falls back to `user`).
    """

    message: str
    reason: str
    role: Literal["user", "tool"] = "user"


@dataclass(frozen=True)
class Rewrite:
    """The reply is really `reply` (e.g. tool calls rescued from text): later strategies judge that.

    Unlike the other decisions this does not end judging; it is recorded as an intervention.
    """

    reply: Completion
    note: str


@dataclass(frozen=True)
class Stop:
    """End the run now: `escalated` (handed back to a human), `failed` (an explicit failure) or
    `guard_fatal` (the guard's error budget ran out and it declared the run lost: Forge's `fatal`)."""

    outcome: Literal["escalated", "failed", "guard_fatal"]
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
    # what the agent's author would declare of the workflow (Forge's `terminal_tool`, `required_steps`):
    # the scenario's terminal tool and the tools its check requires, in the check's order
    terminal_tool: str | None = None
    required_tools: tuple[str, ...] = ()

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

    def after_execute(self, executed: list[ExecutedCall], view: TurnView) -> None:
        """Called after each batch of calls ran against the mocks (optional in the protocol)."""
