"""`completion_guard`: the "no fake progress" turn guard (zagent's command-reliability design; docs/guards.md).

For an action request (an implementation-intent heuristic on the latest user message) a final answer
is accepted only as

- `completed_with_work` — a mutating tool call succeeded during this turn and the answer is not empty;
- `completed_with_blocker` — the answer states an explicit blocker with a reason ("blocked by ...",
  "cannot ... because ...", "unable to ...", "permission denied").

Anything else is `insufficient_progress`: the seed's corrective message and another try, at most
`max_retries` times per turn (the seed's budget of 2), then the run stops as an explicit `failed`
rather than a fake success. Read-only calls, failed edits and "I'll implement this" are all
insufficient. Requests that are not actions pass through untouched.

The final answer is either text or a lone `respond` call, so put this guard before `respond_tool` and
`retry_nudge` in the stack. By default only scenarios that offer a mutating tool can hold action
requests (`require_mutating_tool`): where no tool can change anything, "add 5 and 7" is arithmetic,
not an implementation request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from evalkit.chat import Completion, ExecutedCall, Message
from evalkit.strategies.base import BaseStrategy, Decision, Retry, Stop, TurnView

__all__ = ["CORRECTIVE", "CompletionGuard", "TurnOutcome", "classify_turn", "has_blocker", "is_action_request"]

TurnOutcome = Literal["completed_with_work", "completed_with_blocker", "insufficient_progress"]

# the design's corrective message, verbatim (docs/guards.md, step 4)
CORRECTIVE = (
    "Implementation intent detected but no concrete work or explicit blocker. "
    "Execute required edits now or return actionable blocker."
)
ACTION_KEYWORDS = [
    "implement",
    "create",
    "add",
    "write",
    "edit",
    "fix",
    "update",
    "change",
    "modify",
    "delete",
    "remove",
    "rename",
    "refactor",
    "set",
    "replace",
    "patch",
    "save",
    "append",
    "insert",
    "move",
    "install",
    "configure",
    "make",
]
ANALYSIS_CUES = [
    "explain",
    "why",
    "what does",
    "what is",
    "how does",
    "how do",
    "describe",
    "summarize",
    "summarise",
    "review",
    "analyze",
    "analyse",
    "tell me",
]
BLOCKER_PATTERNS = [
    r"\bblock(?:ed|er)\b",
    r"\b(?:cannot|can't|can not|could not|couldn't|am not able to|was not able to|won't be able to)\b"
    r"(?:[^.!?\n]|[.!?](?=\S)){0,160}?\b(?:because|since|due to|as)\b",  # same sentence ("prod.yaml" is one word)
    r"\bunable to\b",
    r"\bpermission denied\b",
]
_MIN_REASON_WORDS = 3  # a blocker phrase must be followed by at least a few words of cause


def _words(text: str, words: list[str]) -> list[re.Match[str]]:
    return [m for w in words for m in re.finditer(rf"(?<!\w){re.escape(w.lower())}(?!\w)", text)]


def is_action_request(
    message: str, keywords: list[str] = ACTION_KEYWORDS, analysis_cues: list[str] = ANALYSIS_CUES
) -> bool:
    """An action keyword, unless the message asks for analysis (then only an imperative counts)."""
    text = message.lower()
    # whole words only: "address" holds "add", "settings" holds "set"
    hits = _words(text, keywords)
    if not hits:
        return False
    if not _words(text, analysis_cues):
        return True
    # "Explain how to fix X" is analysis; "Why does it fail? Fix it." still asks for a fix
    return any(re.search(r"(?:^|[.!?:;\n]\s*)(?:please\s+)?$", text[: m.start()]) for m in hits)


def has_blocker(text: str, patterns: list[str] = BLOCKER_PATTERNS) -> bool:
    """An explicit blocker phrase followed by some cause, not a bare "unable to."."""
    lowered = text.lower()
    for pattern in patterns:
        match = re.search(pattern, lowered)
        # a blocker needs its cause: "unable to." alone is an excuse, not a blocker a user can act on
        if match and len(lowered[match.end() :].split()) >= _MIN_REASON_WORDS:
            return True
    return False


def classify_turn(answer: str, work: list[ExecutedCall], patterns: list[str] = BLOCKER_PATTERNS) -> TurnOutcome:
    """The seed's acceptance contract for an action turn that ends with `answer`."""
    # a failed edit is no work done, and a read is no change: only a mutating call that succeeded counts
    mutated = any(_succeeded(e) and e.mutating for e in work)
    if mutated and answer.strip():
        return "completed_with_work"
    if has_blocker(answer, patterns):
        return "completed_with_blocker"
    return "insufficient_progress"


def _succeeded(done: ExecutedCall) -> bool:
    return done.known_tool and done.error is None and not done.call.malformed


def _turn_start(messages: list[Message]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        # the scenario's own user turn, not a guard's correction (also a user message)
        if messages[i].role == "user" and messages[i].origin == "scenario":
            return i
    return 0


def _turn_work(view: TurnView) -> list[ExecutedCall]:
    """Calls executed since the latest user message (the loop adds one tool message per executed call)."""
    before = sum(1 for m in view.messages[: _turn_start(view.messages)] if m.role == "tool")
    return view.executed[before:]


def _final_answer(reply: Completion) -> str | None:
    """The text that would end the turn: plain text, or the message of a lone `respond` call."""
    if not reply.tool_calls:
        return reply.text
    if all(c.name == "respond" for c in reply.tool_calls):
        message = (reply.tool_calls[0].arguments or {}).get("message")
        return message if isinstance(message, str) else ""
    return None  # real calls: the work is still going on


def _why(work: list[ExecutedCall]) -> str:
    if any(e.mutating for e in work):
        return "mutating call failed and no blocker stated"
    return "only read-only calls and no blocker" if work else "no tool work and no blocker"


@dataclass
class CompletionGuard(BaseStrategy):
    """Accept an action turn only with work evidence or an explicit blocker."""

    name: ClassVar[str] = "completion_guard"
    max_retries: int = 2  # the seed's bounded budget, per user turn
    message: str = CORRECTIVE
    require_mutating_tool: bool = True
    keywords: list[str] = field(default_factory=lambda: list(ACTION_KEYWORDS))
    analysis_cues: list[str] = field(default_factory=lambda: list(ANALYSIS_CUES))
    blocker_patterns: list[str] = field(default_factory=lambda: list(BLOCKER_PATTERNS))

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        for pattern in self.blocker_patterns:
            try:
                re.compile(pattern)  # a bad pattern is a config error now, not a crash mid-run
            except re.error as exc:
                raise ValueError(f"blocker pattern {pattern!r}: {exc}") from exc
        self.used = 0
        self._turn = -1

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        answer = _final_answer(reply)
        if answer is None or not self.applies(view):
            return None
        work = _turn_work(view)
        if classify_turn(answer, work, self.blocker_patterns) != "insufficient_progress":
            return None
        turn = _turn_start(view.messages)
        # the budget is per user turn: a new turn starts with every retry again
        if turn != self._turn:
            self._turn, self.used = turn, 0
        if self.used >= self.max_retries:
            return Stop("failed", f"insufficient progress after {self.max_retries} retries ({_why(work)})")
        self.used += 1
        return Retry(self.message, f"insufficient progress: {_why(work)} (retry {self.used}/{self.max_retries})")

    def applies(self, view: TurnView) -> bool:
        # where no offered tool can change anything, no turn can be asked to do work
        if self.require_mutating_tool and not view.mutating_tools & view.tool_names():
            return False
        return is_action_request(view.user_message, self.keywords, self.analysis_cues)
