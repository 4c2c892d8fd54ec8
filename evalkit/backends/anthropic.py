"""`kind: anthropic`: the Messages API (`POST {url}/v1/messages`, default url https://api.anthropic.com).

The Messages API differs from Chat Completions in ways that matter for tool calling:

- the system prompt is a top-level field, not a message;
- an assistant's calls are `tool_use` blocks, and their results go back as `tool_result` blocks in
  the *next user message*, all of one turn's results together;
- roles must alternate, so consecutive same-role messages (a tool result, then a guard's nudge)
  are merged into one message's blocks, and empty text blocks (which the API refuses) are left out;
- `tool_choice` is an object: "required" becomes `{"type": "any"}`.

There is no grammar, schema or seed: constraints are `unsupported` (or dropped when optional) and
the seed travels only in the `X-Evalkit-Seed` header, which evalkit's simulated server reads. The
key (ANTHROPIC_API_KEY unless `api_key_env` names another) goes in the `x-api-key` header only.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.backends._wire import check_tool_choice, normalise_finish, settle_constraint, tool_call
from evalkit.backends.base import Feature
from evalkit.backends.http_backend import HttpBackend
from evalkit.chat import CallContext, ChatRequest, Completion, Message, Usage
from evalkit.errors import BackendError

__all__ = ["API_VERSION", "AnthropicBackend", "anthropic_messages"]

DEFAULT_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
_FEATURES: frozenset[Feature] = frozenset({"native_tools", "tool_choice_any", "tool_choice_required"})
_TOOL_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
    for call in message.tool_calls:
        # `input` must be an object: a call whose arguments never parsed goes back empty
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments or {}})
    return blocks


def anthropic_messages(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, alternating messages of content blocks). `origin` never leaves the process."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"  # tool results travel as user turns
        blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def _parse(body: dict[str, Any], latency_s: float, dropped: bool) -> Completion:
    try:
        blocks = body["content"]
        texts = [b["text"] for b in blocks if b.get("type") == "text"]
        calls = [tool_call(b.get("id"), b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
    except (KeyError, TypeError, AttributeError) as exc:
        raise BackendError(
            f"unexpected Messages API shape ({type(exc).__name__}: {exc}): {json.dumps(body)[:200]}"
        ) from exc
    usage = body.get("usage") or {}
    return Completion(
        text="".join(texts),
        tool_calls=calls,
        finish_reason=normalise_finish(body.get("stop_reason")),
        usage=Usage(
            prompt_tokens=int(usage.get("input_tokens") or 0), completion_tokens=int(usage.get("output_tokens") or 0)
        ),
        latency_s=latency_s,
        constraint_dropped=dropped,
    )


class AnthropicBackend(HttpBackend):
    """Anthropic's Messages API (or a server that speaks it, such as llama-server's `/v1/messages`)."""

    kind = "anthropic"
    key_env = "ANTHROPIC_API_KEY"  # read at the default url (Anthropic's); llama-server's /v1/messages needs none
    default_url = DEFAULT_URL
    features = _FEATURES

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    async def describe(self) -> dict[str, Any]:
        return {**self._identity(), "api_version": API_VERSION}

    def payload(self, request: ChatRequest) -> tuple[dict[str, Any], bool]:
        """The wire request, and whether an optional constraint was dropped."""
        _, dropped = settle_constraint(request, backend="anthropic", kinds=())
        system, messages = anthropic_messages(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.sampling.max_tokens,
            "temperature": request.sampling.temperature,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
        choice = check_tool_choice(request, backend="anthropic", allowed=_TOOL_CHOICE)
        if choice is not None:
            body["tool_choice"] = _TOOL_CHOICE[choice]
        return body, dropped

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        body, dropped = self.payload(request)
        # the API has no seed field; evalkit's simulated server reads the seed here (docs/protocols.md)
        seed = {} if request.sampling.seed is None else {"X-Evalkit-Seed": str(request.sampling.seed)}
        reply = await self.post("v1/messages", body, seed)
        return _parse(reply.body, reply.latency_s, dropped)
