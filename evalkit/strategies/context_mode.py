"""`context_mode`: CursorClaw's context-aware system behaviour (docs/guards.md), minimal vs full context.

- `minimal` — tool-focused: a short system prompt, only the current user turn, and the user message
  prefixed with "You must respond by calling one or more of the provided tools…". Applied when the
  request offers tools; without tools there is nothing to focus on and the request is left full.
- `full` — the whole history and the scenario's system prompt, unchanged.
- `auto` — per turn, the spec's heuristic on the latest user message: tools offered and tool-ish
  language (an action verb, a file path, a word from an offered tool's name) → minimal; chat,
  creative or explanatory language → full; neither → `when_uncertain` (minimal by default, the
  spec's "safe for tool reliability" choice).

What "latest user message only" keeps: the latest message the scenario's user wrote *and everything
after it* (the model's calls, the mocked results, guard nudges). Dropping the current turn's results
would make a 4-step chain impossible: at step 2 the model would no longer see step 1's result and
would call step 1 again. Earlier turns are dropped. The scenario's system prompt is kept after the
short tool-focus line, as CursorClaw kept injecting AGENTS.md/IDENTITY.md: it is the task's
substrate, and dropping it would change the task rather than its framing (`keep_system: false`
drops it).

Every `prepare` notes what was chosen and why, so the report shows what `auto` did per turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from evalkit.chat import ChatRequest, Message, ToolSpec
from evalkit.strategies.base import BaseStrategy, TurnView

__all__ = ["DEFAULT_PREFIX", "DEFAULT_SYSTEM", "ContextMode", "choose_context"]

Mode = Literal["minimal", "full"]

DEFAULT_PREFIX = "You must respond by calling one or more of the provided tools."
DEFAULT_SYSTEM = "You are an agent that does tasks by calling the provided tools."
# file/substrate/workspace/edit/run/update language (docs/guards.md), plus the verbs of tool tasks
TOOL_KEYWORDS = [
    "edit",
    "update",
    "run",
    "read",
    "write",
    "create",
    "delete",
    "remove",
    "rename",
    "save",
    "fix",
    "set",
    "file",
    "folder",
    "directory",
    "workspace",
    "substrate",
    "roadmap",
    "memory",
    "search",
    "find",
    "look up",
    "lookup",
    "fetch",
    "check",
    "book",
    "send",
    "schedule",
    "cancel",
    "order",
    "refund",
    "list",
]
TEXT_KEYWORDS = [
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "how are you",
    "explain",
    "summarize",
    "summarise",
    "story",
    "poem",
    "joke",
    "describe",
    "opinion",
    "what do you think",
    "tell me about",
    "why",
]
_PATH = re.compile(r"[\w.-]+/[\w./-]*\w|\b[\w-]+\.(?:py|md|txt|json|ya?ml|toml|js|ts|go|rs|cfg|ini|csv)\b")
_GENERIC_NAME_PARTS = {"get", "set", "list", "find", "tool", "data", "info", "respond"}  # not distinctive


def _has_word(text: str, words: list[str]) -> str | None:
    for word in words:
        if re.search(rf"(?<!\w){re.escape(word.lower())}(?!\w)", text):
            return word
    return None


def _tool_words(tools: list[ToolSpec]) -> list[str]:
    """Distinctive parts of the offered tools' names: get_weather -> weather."""
    parts = {p for t in tools for p in re.split(r"[^a-z0-9]+", t.name.lower()) if len(p) >= 4}
    return sorted(parts - _GENERIC_NAME_PARTS)


def choose_context(
    message: str, tools: list[ToolSpec], *, tool_keywords: list[str], text_keywords: list[str], when_uncertain: Mode
) -> tuple[Mode, str]:
    """The spec's heuristic: (mode, why). Tool cues win over text cues (docs/guards.md, "auto")."""
    if not tools:
        return "full", "no tools offered"
    text = message.lower()
    path = _PATH.search(message)
    if path:
        return "minimal", f"file path {path.group(0)!r}"
    hit = _has_word(text, [t.name for t in tools] + _tool_words(tools))
    if hit:
        return "minimal", f"mentions tool word {hit!r}"
    hit = _has_word(text, tool_keywords)
    if hit:
        return "minimal", f"tool keyword {hit!r}"
    hit = _has_word(text, text_keywords)
    if hit:
        return "full", f"conversational keyword {hit!r}"
    return when_uncertain, "no cue; tools offered" if when_uncertain == "minimal" else "no cue"


def _current_turn(messages: list[Message]) -> tuple[int, list[Message]]:
    """Index of the latest scenario user message and the messages from it on."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user" and messages[i].origin == "scenario":
            return i, messages[i:]
    return len(messages), []


@dataclass
class ContextMode(BaseStrategy):
    """Choose minimal or full context per model call; `auto` decides per turn."""

    name: ClassVar[str] = "context_mode"
    mode: Literal["minimal", "full", "auto"] = "auto"
    when_uncertain: Mode = "minimal"
    prefix: str = DEFAULT_PREFIX
    system: str = DEFAULT_SYSTEM
    keep_system: bool = True
    tool_keywords: list[str] = field(default_factory=lambda: list(TOOL_KEYWORDS))
    text_keywords: list[str] = field(default_factory=lambda: list(TEXT_KEYWORDS))

    def __post_init__(self) -> None:
        if self.mode not in ("minimal", "full", "auto"):
            raise ValueError(f"mode must be minimal, full or auto, not {self.mode!r}")
        if self.when_uncertain not in ("minimal", "full"):
            raise ValueError(f"when_uncertain must be minimal or full, not {self.when_uncertain!r}")

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        chosen, why = self.choose(request, view)
        view.note(self.name, f"{chosen}: {why}")
        return self.minimal(request) if chosen == "minimal" else request

    def choose(self, request: ChatRequest, view: TurnView) -> tuple[Mode, str]:
        if not request.tools:
            return "full", "no tools offered"
        if self.mode != "auto":
            return self.mode, "configured"
        return choose_context(
            view.user_message,
            request.tools,
            tool_keywords=self.tool_keywords,
            text_keywords=self.text_keywords,
            when_uncertain=self.when_uncertain,
        )

    def minimal(self, request: ChatRequest) -> ChatRequest:
        start, turn = _current_turn(request.messages)
        if not turn:
            return request
        scenario_system = [m.content for m in request.messages[:start] if m.role == "system"]
        system = "\n\n".join([self.system, *scenario_system] if self.keep_system else [self.system])
        user = turn[0].model_copy(update={"content": f"{self.prefix}\n\nUser request: {turn[0].content}"})
        messages = [Message(role="system", content=system, origin="harness"), user, *turn[1:]]
        return request.model_copy(update={"messages": messages})
