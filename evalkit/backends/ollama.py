"""`kind: ollama`: Ollama's native `/api/chat` (not its OpenAI layer, which cannot set `num_ctx`).

`url` is the server root (default http://127.0.0.1:11434). Differences from the OpenAI dialect:
tool-call arguments arrive as JSON objects, tool results carry `tool_name`, sampling goes in
`options`, and `format` takes a JSON schema. There is no `tool_choice` and no GBNF grammar, so
strategies needing them are reported `unsupported`. `/api/show` lists a model's capabilities; a
model without `tools` would refuse them, so `native_tools` follows it.

Options (`entry.options`): `num_ctx` (the context window; Ollama's default is small), `keep_alive`,
`think` (for thinking models), passed through unchanged.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from evalkit.backends._wire import check_tool_choice, constraint_body, normalise_finish, settle_constraint, tool_call
from evalkit.backends.base import Feature
from evalkit.backends.http_backend import HttpBackend
from evalkit.backends.settings import BackendSettings
from evalkit.chat import CallContext, ChatRequest, Completion, Message, Usage
from evalkit.errors import BackendError, UnsupportedFeature

if TYPE_CHECKING:
    import httpx

__all__ = ["OllamaBackend", "ollama_messages"]

DEFAULT_URL = "http://127.0.0.1:11434"
_PASSTHROUGH = ("keep_alive", "think")


def _wire_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "tool" and message.name:
        out["tool_name"] = message.name
    if message.tool_calls:
        # Ollama wants an object; a call whose arguments never parsed goes back empty
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments or {}}} for c in message.tool_calls]
    return out


def ollama_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """`/api/chat` messages; `origin` never leaves the process."""
    return [_wire_message(m) for m in messages]


def _parse(body: dict[str, Any], latency_s: float, dropped: bool) -> Completion:
    if "error" in body:  # Ollama can answer 200 with an error object
        raise BackendError(f"ollama error: {str(body['error'])[:300]}")
    try:
        message = body["message"]
        calls = [
            tool_call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
            for c in message.get("tool_calls") or []
        ]
    except (KeyError, TypeError, AttributeError) as exc:
        raise BackendError(
            f"unexpected /api/chat shape ({type(exc).__name__}: {exc}): {json.dumps(body)[:200]}"
        ) from exc
    text = message.get("content")
    usage = Usage(
        prompt_tokens=int(body.get("prompt_eval_count") or 0), completion_tokens=int(body.get("eval_count") or 0)
    )
    return Completion(
        text=text if isinstance(text, str) else "",
        tool_calls=calls,
        finish_reason=normalise_finish(body.get("done_reason")),
        usage=usage,
        latency_s=latency_s,
        constraint_dropped=dropped,
    )


class OllamaBackend(HttpBackend):
    """An Ollama server (the key, if any, is for an Ollama behind an authenticating proxy)."""

    kind = "ollama"
    default_url = DEFAULT_URL

    def __init__(self, *, entry: BackendSettings, client: httpx.AsyncClient, api_key: str | None = None):
        super().__init__(entry=entry, client=client, api_key=api_key)
        self._capabilities: list[str] | None = None

    def supports(self, feature: Feature) -> bool:
        if feature == "native_tools":
            return self._capabilities is None or "tools" in self._capabilities
        return feature == "json_schema"

    async def _digest(self) -> str | None:
        tags = await self._get("api/tags")
        names = {self.model, self.model if ":" in self.model else f"{self.model}:latest"}
        for item in tags.get("models") or []:
            if isinstance(item, dict) and (item.get("name") in names or item.get("model") in names):
                digest = item.get("digest")
                return str(digest) if digest else None
        return None

    async def describe(self) -> dict[str, Any]:
        """`/api/show` for the model's details and capabilities, `/api/tags` for its digest."""
        show = (await self.post("api/show", {"model": self.model})).body
        caps = show.get("capabilities")
        self._capabilities = [str(c) for c in caps] if isinstance(caps, list) else None
        return {
            **self._identity(),
            "digest": await self._digest(),
            "details": show.get("details"),
            "capabilities": self._capabilities,
            "modified_at": show.get("modified_at"),
            "options": {k: self.entry.options[k] for k in ("num_ctx", *_PASSTHROUGH) if k in self.entry.options},
        }

    def _options(self, request: ChatRequest) -> dict[str, Any]:
        options: dict[str, Any] = {
            "temperature": request.sampling.temperature,
            "num_predict": request.sampling.max_tokens,
        }
        if request.sampling.seed is not None:
            options["seed"] = request.sampling.seed
        if "num_ctx" in self.entry.options:
            options["num_ctx"] = int(self.entry.options["num_ctx"])
        return options

    def payload(self, request: ChatRequest) -> tuple[dict[str, Any], bool]:
        """The wire request, and whether an optional constraint was dropped."""
        if request.tools and not self.supports("native_tools"):
            raise UnsupportedFeature(f"ollama model {self.model} has no 'tools' capability (feature 'native_tools')")
        # Ollama cannot force or forbid a call; "auto" is what it does anyway
        check_tool_choice(request, backend="ollama", allowed={"auto"})
        constraint, dropped = settle_constraint(request, backend="ollama", kinds={"json_schema"})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": ollama_messages(request.messages),
            "stream": False,
            "options": self._options(request),
        }
        body.update({k: self.entry.options[k] for k in _PASSTHROUGH if k in self.entry.options})
        if request.tools:
            body["tools"] = [t.openai_schema() for t in request.tools]
        if constraint is not None:
            body["format"] = constraint_body(constraint)
        return body, dropped

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        body, dropped = self.payload(request)
        reply = await self.post("api/chat", body)
        return _parse(reply.body, reply.latency_s, dropped)
