"""A counting pass-through: what the model server behind a guard proxy actually served.

A guard proxy retries on its own, so the client sees one answer for several model calls. evalkit puts
this loopback HTTP server between the proxy and the model server (the proxy's `{upstream}` is this
server): it forwards every request and answer unchanged and counts each model call it carried, with
the tokens of the answer's `usage` and the time the model server took. A run's served figures are
the counter's change over the run, exact when one run at a time uses the chain (evalkit/backends/chain.py).

Model calls are POSTs to a completion endpoint (`/chat/completions`, `/messages`, `/completion`,
Ollama's `/api/chat`); a call answered with an HTTP error still counts as served (`errors` says how
many were), and a model server that does not answer at all is the proxy's 502, not a served call.
Tokens come from OpenAI's `usage`, Anthropic's `input_tokens`/`output_tokens`, llama-server's
`tokens_evaluated`/`tokens_predicted` (or the `timings` of its streamed answers) or Ollama's
`prompt_eval_count`/`eval_count`, in a JSON answer or in the `data:` lines of a stream. A call whose
answer reports none is counted in `no_usage`: its tokens are unknown, not zero. The request is
forwarded as the client sent it: asking the server for a usage chunk the client did not ask for
would change what the client sees.

Answers are bounded by `max_bytes` (a `url:` backend's `max_response_bytes`), counted after
decompression. A stream (`text/event-stream`) goes through chunk by chunk as the server writes it,
its usage read line by line; one that passes the limit is cut after an error event in the protocol's
form (which the openai and anthropic SDKs raise) and counted as an error. Any other answer is held
up to the limit and answered whole, or replaced by a 502 JSON error past it.

A run's model URL (`/run/<token>/v1`, evalkit/backends/run_url.py) is stripped before forwarding, so
the model server sees its own paths, and the calls under it are also counted per token (`by_run`):
every served call of an agent under test is attributed to its run, however many runs share the server.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields, replace
from typing import Any

import aiohttp
from aiohttp import web
from pydantic_core import from_json

from evalkit.backends._http import MAX_RESPONSE_BYTES
from evalkit.backends.run_url import split_run_path

__all__ = ["CountingPassThrough", "ServedCount"]

_MODEL_PATHS = ("/chat/completions", "/messages", "/completion", "/completions", "/api/chat", "/api/generate")
# hop-by-hop headers, and those of the encoding: aiohttp frames and decompresses each leg itself, so an
# answer is forwarded decompressed (and its size counted so), never with the other leg's framing
_HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"})
_ANSWER_HOP = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})
_TOKENS = (
    ("prompt_tokens", "completion_tokens"),
    ("input_tokens", "output_tokens"),
    ("tokens_evaluated", "tokens_predicted"),
    ("prompt_eval_count", "eval_count"),
    ("prompt_n", "predicted_n"),  # llama-server's `timings`, in every answer it streams
)
_ERROR_TYPE = "evalkit_passthrough"


@dataclass
class ServedCount:
    """Model calls a model server answered, their tokens and the time it took to answer them."""

    calls: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    no_usage: int = 0  # calls whose answer reported no tokens (unknown, not zero)

    def minus(self, before: ServedCount) -> ServedCount:
        return ServedCount(**{f.name: getattr(self, f.name) - getattr(before, f.name) for f in fields(self)})

    def plus(self, other: ServedCount) -> ServedCount:
        return ServedCount(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def snapshot(self) -> ServedCount:
        return replace(self)


def _pair(data: Any) -> tuple[int | None, int | None] | None:
    """The (prompt, completion) counts a JSON document reports, or None when it has no usage at all."""
    if not isinstance(data, dict):
        return None
    message = data.get("message")
    nested = message.get("usage") if isinstance(message, dict) else None
    # at the top (OpenAI, Anthropic), under `message` (Anthropic's stream start), in `timings`
    # (llama-server's stream), or in the document itself (Ollama, llama-server)
    for source in (data.get("usage"), nested, _timings(data.get("timings")), data):
        if isinstance(source, dict):
            for prompt, completion in _TOKENS:
                if prompt in source or completion in source:
                    return _count(source.get(prompt)), _count(source.get(completion))
    return None


def _timings(timings: Any) -> dict[str, Any] | None:
    """llama-server's `timings` as counts: its `prompt_n` leaves out the prompt tokens its cache
    served (`cache_n`), which its `usage.prompt_tokens` counts, so they are added back."""
    if not isinstance(timings, dict) or "predicted_n" not in timings:
        return None
    evaluated, cached = _count(timings.get("prompt_n")), _count(timings.get("cache_n"))
    prompt = None if evaluated is None else evaluated + (cached or 0)
    return {"prompt_n": prompt, "predicted_n": timings.get("predicted_n")}


def _count(value: Any) -> int | None:
    """A token count as a server wrote it: anything but a non-negative integer counts as none."""
    # `type(...) is int`, not isinstance: to Python `True` is an int, and it is no count
    return value if type(value) is int and value >= 0 else None


class _Tally:
    """The largest (prompt, completion) counts over an answer's documents, read as they arrive. The
    answer is the model server's, so untrusted: what does not parse (or nests past pydantic-core's
    parser's depth, parsed without Python recursion) or holds no sane count counts no tokens."""

    def __init__(self) -> None:
        self.prompt = self.completion = 0
        self.reported = False  # some document held a sane count
        self._line = bytearray()  # a stream's line not yet ended

    def document(self, document: bytes | bytearray) -> None:
        try:
            pair = _pair(from_json(document))
        except ValueError:
            return
        if pair is not None and pair != (None, None):
            self.reported = True
            self.prompt = max(self.prompt, pair[0] or 0)
            self.completion = max(self.completion, pair[1] or 0)

    def stream(self, chunk: bytes) -> None:
        """Read a stream's `data:` lines as its chunks arrive (a line may span chunks; each byte is
        scanned once, however long the line)."""
        if b"\n" not in chunk:
            self._line += chunk
            return
        first, *middle, rest = chunk.split(b"\n")
        self._line += first
        for line in [bytes(self._line), *middle]:
            if line.startswith(b"data:"):
                self.document(line[5:].strip())
        self._line = bytearray(rest)


def answer_tokens(body: bytes, stream: bool) -> tuple[int, int]:
    """(prompt, completion) tokens an answer reports: the largest of each over a stream's events."""
    tally = _Tally()
    if stream:
        tally.stream(body + b"\n")
    else:
        tally.document(body)
    return tally.prompt, tally.completion


def _error(path: str, status: int, message: str) -> web.Response:
    """An error answer in the protocol's own shape (Anthropic's for `/messages`, else OpenAI's)."""
    if path.rstrip("/").endswith("/messages"):
        return web.json_response({"type": "error", "error": {"type": _ERROR_TYPE, "message": message}}, status=status)
    return web.json_response({"error": {"message": message, "type": _ERROR_TYPE}}, status=status)


def _error_event(path: str, message: str) -> bytes:
    """The same error as a stream's last event: the openai and anthropic SDKs raise it."""
    if path.rstrip("/").endswith("/messages"):
        data = json.dumps({"type": "error", "error": {"type": _ERROR_TYPE, "message": message}})
        return f"event: error\ndata: {data}\n\n".encode()
    return f"data: {json.dumps({'error': {'message': message, 'type': _ERROR_TYPE}})}\n\n".encode()


class _TooLarge(Exception):
    """An answer passed `max_bytes` (decoded)."""


class CountingPassThrough:
    """Forwards everything on a loopback port to `upstream` (a root URL) and counts the model calls.

    `max_bytes` bounds every answer, decoded (a `url:` backend's `max_response_bytes`)."""

    def __init__(self, upstream: str, session: aiohttp.ClientSession, max_bytes: int = MAX_RESPONSE_BYTES):
        self.upstream = upstream.rstrip("/")
        self.count = ServedCount()
        self.max_bytes = max_bytes
        self.by_run: dict[str, ServedCount] = {}
        self._session = session
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        token, path = split_run_path(request.path)
        counted = request.method == "POST" and path.rstrip("/").endswith(_MODEL_PATHS)
        into = [self.count, self.by_run.setdefault(token, ServedCount())] if token and counted else [self.count]
        query = f"?{request.query_string}" if request.query_string else ""
        started = time.perf_counter()
        tally = _Tally()
        try:
            async with self._session.request(
                request.method, self.upstream + path + query, data=body, headers=headers, allow_redirects=False
            ) as answer:
                reply_headers = {k: v for k, v in answer.headers.items() if k.lower() not in _ANSWER_HOP}
                if answer.content_type == "text/event-stream":
                    response = web.StreamResponse(status=answer.status, headers=reply_headers)
                    cut = await self._stream(request, response, answer, tally)
                    if counted:
                        self._add(into, answer.status, tally, time.perf_counter() - started, cut=cut)
                    return response
                data = await self._read(answer)
        except aiohttp.ClientError as exc:
            return _error(request.path, 502, f"evalkit pass-through: the model server did not answer: {exc}")
        except _TooLarge:
            if counted:
                self._add(into, answer.status, tally, time.perf_counter() - started, cut=True)
            return _error(request.path, 502, self._too_large())
        if counted:
            tally.document(data)
            self._add(into, answer.status, tally, time.perf_counter() - started)
        return web.Response(status=answer.status, body=data, headers=reply_headers)

    def _too_large(self) -> str:
        return (
            f"evalkit pass-through: the model server's answer passed max_response_bytes ({self.max_bytes:,} "
            "bytes, decoded); raise the backend's max_response_bytes if the answer is legitimate"
        )

    async def _read(self, answer: aiohttp.ClientResponse) -> bytes:
        """The decoded body, abandoned as soon as it passes `max_bytes` (a small gzip answer that
        inflates past it stops here too: aiohttp inflates a bounded piece at a time)."""
        declared = answer.content_length
        if declared is not None and "content-encoding" not in answer.headers and declared > self.max_bytes:
            raise _TooLarge
        data = bytearray()
        async for chunk in answer.content.iter_chunked(1 << 16):
            data += chunk
            if len(data) > self.max_bytes:
                raise _TooLarge
        return bytes(data)

    async def _stream(
        self, request: web.Request, response: web.StreamResponse, answer: aiohttp.ClientResponse, tally: _Tally
    ) -> bool:
        """Send the stream on as it arrives, reading its usage; True when it was cut short (at the
        limit, or by a client that went away)."""
        await response.prepare(request)
        size = 0
        try:
            async for chunk in answer.content.iter_chunked(1 << 16):
                size += len(chunk)
                if size > self.max_bytes:
                    await response.write(_error_event(request.path, self._too_large()))
                    await response.write_eof()
                    return True
                tally.stream(chunk)
                await response.write(chunk)
            await response.write_eof()
        except ConnectionError:  # the client left: the model server's answer is dropped with it
            return True
        return False

    def _add(self, into: list[ServedCount], status: int, tally: _Tally, latency_s: float, cut: bool = False) -> None:
        for count in into:  # the server's total, and the run's when its URL named one
            count.calls += 1
            count.errors += status >= 400 or cut
            count.prompt_tokens += tally.prompt
            count.completion_tokens += tally.completion
            count.no_usage += not tally.reported
            count.latency_s += latency_s
