"""`grammar`: constrained decoding (PedroCLI ADR-004), so every reply is a valid call of an offered tool.

From the request's tools (after earlier strategies, so `respond` is in when `respond_tool` comes
first in the stack) it builds one of two equivalent constraints (`evalkit.strategies.gbnf`):

- `mode: grammar` — a GBNF grammar (`Constraint(kind="grammar")`); the backend needs `grammar`;
- `mode: schema` — a JSON schema with one `oneOf` branch per tool; the backend needs `json_schema`;
- `mode: hybrid` — the grammar marked optional: a backend that refuses constraints runs the call
  unconstrained and sets `completion.constraint_dropped`, which this guard records as a note.

It is a prompt-mode strategy: llama-server refuses a custom grammar together with `tools`, so in
native mode it requires `grammar_with_tools`, which no backend offers, and those cells are reported
as `unsupported`. Order matters: put it after `respond_tool` so the grammar has a `respond` branch,
without which a constrained model can never answer in words (the greeting/relevance trade-off that
notes/local-models.md measured).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar, Literal

from evalkit.backends.base import Feature
from evalkit.chat import ChatRequest, Completion, Constraint, ToolMode, ToolSpec
from evalkit.strategies.base import BaseStrategy, Decision, TurnView
from evalkit.strategies.gbnf import tool_call_grammar, tool_call_schema

__all__ = ["Grammar"]

GrammarMode = Literal["grammar", "schema", "hybrid"]
_MODES = ("grammar", "schema", "hybrid")


@dataclass
class Grammar(BaseStrategy):
    """Constrain every call that offers tools to the calls of those tools."""

    name: ClassVar[str] = "grammar"
    mode: GrammarMode = "grammar"
    parallel: bool = False  # also allow a JSON list of calls
    allow_text: bool = False  # ADR-004's text-or-tool grammar: plain text is a second alternative
    max_string_chars: int | None = None  # bound JSON strings (a runaway string ends at the token limit)

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {list(_MODES)}, not {self.mode!r}")
        if self.allow_text and self.mode == "schema":
            raise ValueError("allow_text needs a grammar: a JSON schema cannot allow plain text")
        if self.max_string_chars is not None and not 1 <= self.max_string_chars <= 2000:
            raise ValueError("max_string_chars must be between 1 and 2000 (llama.cpp's repetition limit)")
        self._cache: dict[str, Constraint] = {}

    def requires(self, mode: ToolMode) -> set[Feature]:
        if mode == "native":
            return {"grammar_with_tools"}
        if self.mode == "hybrid":
            return set()
        return {"grammar"} if self.mode == "grammar" else {"json_schema"}

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        if not request.tools:
            return request  # nothing to call: leave the reply free
        return request.model_copy(update={"constraint": self.constraint(request.tools)})

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        if reply.constraint_dropped:
            view.note(self.name, "backend refused the constraint; this call ran unconstrained")
        return None

    def constraint(self, tools: list[ToolSpec]) -> Constraint:
        """The constraint for these tools; built once per tool set (the tools rarely change in a run)."""
        key = json.dumps([t.model_dump() for t in tools], sort_keys=True)
        if key not in self._cache:
            self._cache[key] = self._build(tools)
        return self._cache[key]

    def _build(self, tools: list[ToolSpec]) -> Constraint:
        if self.mode == "schema":
            schema = tool_call_schema(tools, parallel=self.parallel, max_string_chars=self.max_string_chars)
            return Constraint(kind="json_schema", json_schema=schema)
        grammar = tool_call_grammar(
            tools, parallel=self.parallel, allow_text=self.allow_text, max_string_chars=self.max_string_chars
        )
        return Constraint(kind="grammar", grammar=grammar, optional=self.mode == "hybrid")
