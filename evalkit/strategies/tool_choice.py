"""`tool_choice`: ADR-013 approach C, force a tool call through the API (`tool_choice="required"`).

Every request that offers tools is sent with `tool_choice="required"`. Backends translate it:
OpenAI and llama-server send `"required"` (llama-server accepts it but does not always enforce it),
Anthropic sends `{"type": "any"}`. A backend that can do neither (Ollama) lacks the
`tool_choice_required` feature, so the runner reports those cells as `unsupported` instead of
quietly running them unforced.

Prompt mode has no tool API: `apply_prompt_mode` clears `tool_choice`, so forcing would silently be
a no-op and the cell would measure `trust_text` under another name. The strategy therefore requires
`tool_choice_in_prompt_mode`, a feature no backend has, and prompt-mode cells are `unsupported`.
Forcing a call in prompt mode is what the `grammar` strategy does, and it is measured there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from evalkit.backends.base import Feature
from evalkit.chat import ChatRequest, ToolMode
from evalkit.strategies.base import BaseStrategy, TurnView

__all__ = ["ToolChoiceRequired"]


@dataclass
class ToolChoiceRequired(BaseStrategy):
    """Send `tool_choice="required"` whenever tools are offered."""

    name: ClassVar[str] = "tool_choice"

    def requires(self, mode: ToolMode) -> set[Feature]:
        return {"tool_choice_required"} if mode == "native" else {"tool_choice_in_prompt_mode"}

    def prepare(self, request: ChatRequest, view: TurnView) -> ChatRequest:
        if not request.tools:
            return request  # "required" with no tools is an API error, and there is nothing to force
        return request.model_copy(update={"tool_choice": "required"})
