"""`kind: openai`: any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, LM Studio, a guard proxy).

`url` is the API base including `/v1`, as the OpenAI SDK's `base_url` (default
https://api.openai.com/v1); requests go to `{url}/chat/completions`. The key comes from the variable
named by `api_key_env` (default OPENAI_API_KEY) and is sent as a bearer token only.

Options (`entry.options`): `max_tokens_field` (default `max_tokens`; newer OpenAI models want
`max_completion_tokens`), `parallel_tool_calls` (sent only when set).

The message and response helpers here are shared with llama-server, which speaks the same dialect;
so is the rule for llama.cpp's HTTP 500 on a tool call it cannot parse (`unparsed_call`): a model's
failure, whether evalkit reaches the llama.cpp server as `kind: llama-server` or through `kind:
openai` (as the `direct` entries of configs/forge-smollm2.yaml do, beside Forge's proxy).
"""

from __future__ import annotations

import json
import time
from typing import Any

from evalkit.backends._wire import check_tool_choice, constraint_body, normalise_finish, settle_constraint, tool_call
from evalkit.backends.base import Feature
from evalkit.backends.http_backend import HttpBackend
from evalkit.chat import UNKNOWN_TOOL_NAME, CallContext, ChatRequest, Completion, Message, ToolCall, ToolSpec, Usage
from evalkit.errors import BackendError

__all__ = ["UNPARSED_CALL", "OpenAIBackend", "chat_messages", "parse_chat_response", "post_chat", "unparsed_call"]

DEFAULT_URL = "https://api.openai.com/v1"
_FEATURES: frozenset[Feature] = frozenset({"native_tools", "tool_choice_required", "json_schema"})


def _wire_call(call: ToolCall) -> dict[str, Any]:
    # a malformed call goes back as the model wrote it, so the model sees its own mistake
    arguments = call.raw_arguments if call.arguments is None else json.dumps(call.arguments)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments or "{}"}}


def _wire_message(message: Message, *, tool_name: bool) -> dict[str, Any]:
    if message.role == "tool":
        out: dict[str, Any] = {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
        if tool_name and message.name:
            out["name"] = message.name
        return out
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [_wire_call(c) for c in message.tool_calls],
        }
    return {"role": message.role, "content": message.content}


def chat_messages(messages: list[Message], *, tool_name: bool = False) -> list[dict[str, Any]]:
    """Chat Completions messages. `origin` is harness bookkeeping and never leaves the process.

    `tool_name`: also send the tool's name on tool results (llama.cpp templates may render it; the
    OpenAI schema has no such field).
    """
    return [_wire_message(m, tool_name=tool_name) for m in messages]


def chat_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [t.openai_schema() for t in tools]


def _usage(body: dict[str, Any]) -> Usage:
    usage = body.get("usage") or {}
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0), completion_tokens=int(usage.get("completion_tokens") or 0)
    )


def parse_chat_response(body: dict[str, Any], latency_s: float, *, constraint_dropped: bool = False) -> Completion:
    """Normalise a Chat Completions response; a shape we cannot read is a (non-retryable) backend error."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
        raw_calls = message.get("tool_calls") or []
        calls = [
            tool_call(c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
            for c in raw_calls
        ]
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise BackendError(
            f"unexpected chat completion shape ({type(exc).__name__}: {exc}): {json.dumps(body)[:200]}"
        ) from exc
    text = message.get("content")
    return Completion(
        text=text if isinstance(text, str) else "",
        tool_calls=calls,
        finish_reason=normalise_finish(choice.get("finish_reason")),
        usage=_usage(body),
        latency_s=latency_s,
        constraint_dropped=constraint_dropped,
    )


class OpenAIBackend(HttpBackend):
    """An OpenAI-compatible Chat Completions endpoint."""

    kind = "openai"
    key_env = "OPENAI_API_KEY"  # read at the default url (OpenAI's); a local server needs no key
    default_url = DEFAULT_URL
    features = _FEATURES

    @property
    def _max_tokens_field(self) -> str:
        return str(self.entry.options.get("max_tokens_field", "max_tokens"))

    async def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {**self._identity(), "max_tokens_field": self._max_tokens_field}
        try:  # provenance only: a proxy without /models must not stop the run
            listing = await self._get("models")
        except BackendError as exc:
            info["models_error"] = str(exc)
            return info
        models = [m for m in listing.get("data") or [] if isinstance(m, dict)]
        found = [m for m in models if m.get("id") == self.model]
        if found:
            info["served_model"] = {k: found[0][k] for k in ("id", "owned_by", "created") if k in found[0]}
        for model in found or models[:1]:  # the simulated server lists its profile, whatever `model` says
            self._note_simulated(info, model)
        return info

    def payload(self, request: ChatRequest) -> tuple[dict[str, Any], bool]:
        """The wire request, and whether an optional constraint was dropped."""
        constraint, dropped = settle_constraint(request, backend="openai", kinds={"json_schema"})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(request.messages),
            "temperature": request.sampling.temperature,
            self._max_tokens_field: request.sampling.max_tokens,
        }
        if request.sampling.seed is not None:
            body["seed"] = request.sampling.seed
        if request.tools:
            body["tools"] = chat_tools(request.tools)
            if "parallel_tool_calls" in self.entry.options:
                body["parallel_tool_calls"] = bool(self.entry.options["parallel_tool_calls"])
        choice = check_tool_choice(request, backend="openai", allowed={"auto", "required", "none"})
        if choice is not None:
            body["tool_choice"] = choice
        if constraint is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "evalkit_output", "schema": constraint_body(constraint), "strict": False},
            }
        return body, dropped

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        body, dropped = self.payload(request)
        return await post_chat(self, "chat/completions", body, constraint_dropped=dropped)


async def post_chat(backend: HttpBackend, path: str, body: dict[str, Any], *, constraint_dropped: bool) -> Completion:
    """One Chat Completions call, read as a completion; llama.cpp's HTTP 500 on a tool call it cannot
    parse is the model's malformed call, not a server fault (`unparsed_call`). Shared by `kind:
    openai` and `kind: llama-server`, which differ only in the path."""
    started = time.perf_counter()
    try:
        reply = await backend.post(path, body)
    except BackendError as exc:
        if exc.status == 500 and UNPARSED_CALL in str(exc):
            return unparsed_call(str(exc), time.perf_counter() - started)
        raise
    return parse_chat_response(reply.body, reply.latency_s, constraint_dropped=constraint_dropped)


UNPARSED_CALL = "Failed to parse tool call arguments as JSON"  # llama.cpp's HTTP 500 text


def unparsed_call(message: str, latency_s: float) -> Completion:
    """The model's tool call that llama-server could not parse, kept as a malformed call.

    The server parses native tool calls itself and answers HTTP 500 when the model's output is not
    JSON (a small model often runs an argument string to max_tokens). That is a model failure, not a
    server fault: it must be neither retried nor recorded as an infrastructure error. The error text
    is all that is left of the output; the tool's name is lost with it.
    """
    message = message[message.find(UNPARSED_CALL) :]  # without our "HTTP 500 from ..." prefix
    call = ToolCall(id="call_0", name=UNKNOWN_TOOL_NAME, raw_arguments=message, parse_error="llama-server: " + message)
    return Completion(tool_calls=[call], finish_reason="tool_calls", latency_s=latency_s)
