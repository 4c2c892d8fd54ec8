"""`evalkit serve sim`'s streamed answers, and the request options it honours around a draw.

A streamed answer is the unstreamed one cut into pieces: the server draws one completion, builds the
reply it would have sent whole, and this module sends that reply as server-sent events, so a streamed
run is the same draw as the unstreamed one and an SDK that assembles the stream gets the same message.

- **OpenAI** (`stream: true` on `/v1/chat/completions`): `chat.completion.chunk`s, first the role,
  then the text in word-sized `content` deltas, then each tool call (a delta with its `index`, `id`,
  `type` and `name`, then its `arguments` in pieces), then a delta with the `finish_reason`. With
  `stream_options.include_usage` every chunk carries `usage: null` and one more chunk with no choices
  carries the usage. Then `data: [DONE]`.
- **Anthropic** (`stream: true` on `/v1/messages`): `message_start` (the message with no content
  yet), per content block `content_block_start`, its `content_block_delta`s (`text_delta`, or
  `input_json_delta` pieces of a tool call's input) and `content_block_stop`, then `message_delta`
  (`stop_reason`, usage) and `message_stop`.

The options: `n` other than 1 is refused (one choice per request), `stream_options` without `stream`
is refused as OpenAI refuses it, and a named `tool_choice` (OpenAI's `{"type": "function", "function":
{"name": X}}`, Anthropic's `{"type": "tool", "name": X}`) must name an offered tool; the simulated
backend then calls X (`CallContext.forced_tool`). See docs/protocols.md, "Streaming".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from aiohttp import web

from evalkit.backends.sim_wire import SimCall

__all__ = ["anthropic_events", "honoured", "openai_events", "send_events"]

ARGUMENT_PIECE = 12  # characters of a tool call's arguments per delta, about what a model emits per token


def _words(text: str) -> list[str]:
    """`text` in pieces that join back to it exactly, each a word with the space before it."""
    if not text:
        return []
    words = text.split(" ")
    return [words[0], *(" " + w for w in words[1:])]


def _pieces(text: str) -> list[str]:
    return [text[i : i + ARGUMENT_PIECE] for i in range(0, len(text), ARGUMENT_PIECE)]


def _data(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def openai_chunks(reply: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    """The `chat.completion.chunk`s of an unstreamed `chat.completion` reply (module docstring)."""
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": reply["created"], "model": reply["model"]}
    base["system_fingerprint"] = reply["system_fingerprint"]
    extra = {"usage": None} if include_usage else {}
    choice = reply["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra}

    text = message.get("content") or ""
    yield chunk({"role": "assistant", "content": "" if text else None})
    for word in _words(text):
        yield chunk({"content": word})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        head = {"name": function["name"], "arguments": ""}
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": head}]})
        for piece in _pieces(function["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield {**base, "choices": [], "usage": reply["usage"]}


def openai_events(reply: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
    """The SSE bytes of an OpenAI stream, ending in `data: [DONE]`."""
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    for chunk in openai_chunks(reply, include_usage):
        yield _data(chunk)
    yield b"data: [DONE]\n\n"


def anthropic_stream(reply: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events of an unstreamed Messages API reply (module docstring)."""
    usage = reply["usage"]
    opening = {**reply, "content": [], "stop_reason": None, "stop_sequence": None}
    yield {
        "type": "message_start",
        "message": {**opening, "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 0}},
    }
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": word} for word in _words(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            pieces = _pieces(json.dumps(block["input"], separators=(",", ":")))
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": reply["stop_reason"], "stop_sequence": reply["stop_sequence"]}
    yield {"type": "message_delta", "delta": delta, "usage": usage}
    yield {"type": "message_stop"}


def anthropic_events(reply: dict[str, Any], body: dict[str, Any]) -> Iterator[bytes]:
    """The SSE bytes of a Messages API stream: each event named on its own `event:` line."""
    for event in anthropic_stream(reply):
        yield b"event: " + event["type"].encode() + b"\n" + _data(event)


async def send_events(request: web.Request, events: Iterable[bytes], headers: dict[str, str]) -> web.StreamResponse:
    """Send `events` as a `text/event-stream` answer, each event written as it comes."""
    response = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    try:
        for event in events:
            await response.write(event)
        await response.write_eof()
    except ConnectionError:  # the client went away mid-stream: nothing is left to answer
        pass
    return response


# -- the request's options -------------------------------------------------------------------------


def _named_tool(choice: object) -> str | None:
    """The tool a `tool_choice` names, in OpenAI's or Anthropic's form; None when it names none."""
    if not isinstance(choice, dict):
        return None
    function = choice.get("function")
    if choice.get("type") == "function" and isinstance(function, dict):
        name = function.get("name")
    elif choice.get("type") == "tool":
        name = choice.get("name")
    else:
        return None
    return name if isinstance(name, str) else ""


def honoured(body: dict[str, Any], call: SimCall) -> SimCall | str:
    """`call` with what the request asks beyond the draw (a named tool), or why it is refused."""
    # a non-boolean `stream` never gets here: the request schema (sim_schema.py) refuses it first
    if body.get("stream_options") is not None and body.get("stream") is not True:
        return "stream_options: only allowed when stream is true"
    n = body.get("n")
    if n is not None and (type(n) is not int or n != 1):
        got = json.dumps(n)[:40]
        return f"n: evalkit's simulated server answers with one choice; send n=1 or leave it out (got {got})"
    name = _named_tool(body.get("tool_choice"))
    if name is None:
        return call
    offered = [t.name for t in call.request.tools]
    if name not in offered:
        return f"tool_choice: names the tool {name[:60]!r}, which is not among the request's tools"
    return replace(call, context=call.context.model_copy(update={"forced_tool": name}))
