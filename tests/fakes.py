"""Test seams: a scripted backend and small builders for scenarios and completions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalkit.backends.base import Feature
from evalkit.chat import CallContext, ChatRequest, Completion, ToolCall
from evalkit.errors import BackendError


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments)


def text(content: str) -> Completion:
    return Completion(text=content)


def calls(*items: ToolCall) -> Completion:
    return Completion(tool_calls=list(items), finish_reason="tool_calls")


Step = Completion | BackendError | Callable[[ChatRequest], Completion]


class ScriptedBackend:
    """Answers each call with the next scripted item; raises scripted errors; records requests."""

    kind = "scripted"
    model = "script"
    simulated = False

    def __init__(self, script: list[Step], *, lacks: set[Feature] | None = None):
        self.script = list(script)
        self.lacks = lacks or set()
        self.requests: list[ChatRequest] = []
        self.contexts: list[CallContext] = []

    def supports(self, feature: Feature) -> bool:
        return feature not in self.lacks

    async def describe(self) -> dict[str, Any]:
        return {"kind": self.kind}

    async def aclose(self) -> None:
        return None

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        self.requests.append(request)
        self.contexts.append(context)
        if not self.script:
            raise AssertionError("script exhausted")
        step = self.script.pop(0)
        if isinstance(step, BackendError):
            raise step
        return step(request) if callable(step) else step
