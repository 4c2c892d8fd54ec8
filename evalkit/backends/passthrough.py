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
`tokens_evaluated`/`tokens_predicted` or Ollama's `prompt_eval_count`/`eval_count`, in a JSON answer
or in the `data:` lines of a stream.

A run's model URL (`/run/<token>/v1`, evalkit/backends/run_url.py) is stripped before forwarding, so
the model server sees its own paths, and the calls under it are also counted per token (`by_run`):
every served call of an agent under test is attributed to its run, however many runs share the server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from typing import Any

import aiohttp
from aiohttp import web
from pydantic_core import from_json

from evalkit.backends.run_url import split_run_path

__all__ = ["CountingPassThrough", "ServedCount"]

_MODEL_PATHS = ("/chat/completions", "/messages", "/completion", "/completions", "/api/chat", "/api/generate")
_HOP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"})
_ANSWER_HOP = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})
_TOKENS = (
    ("prompt_tokens", "completion_tokens"),
    ("input_tokens", "output_tokens"),
    ("tokens_evaluated", "tokens_predicted"),
    ("prompt_eval_count", "eval_count"),
)


@dataclass
class ServedCount:
    """Model calls a model server answered, their tokens and the time it took to answer them."""

    calls: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def minus(self, before: ServedCount) -> ServedCount:
        return ServedCount(**{f.name: getattr(self, f.name) - getattr(before, f.name) for f in fields(self)})

    def plus(self, other: ServedCount) -> ServedCount:
        return ServedCount(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def snapshot(self) -> ServedCount:
        return replace(self)


def _pair(data: Any) -> tuple[int, int]:
    if not isinstance(data, dict):
        return 0, 0
    message = data.get("message")
    for source in (data.get("usage"), message.get("usage") if isinstance(message, dict) else None, data):
        if isinstance(source, dict):
            for prompt, completion in _TOKENS:
                if prompt in source or completion in source:
                    return _count(source.get(prompt)), _count(source.get(completion))
    return 0, 0


def _count(value: Any) -> int:
    """A token count as a server wrote it: anything but a non-negative integer counts as none."""
    return value if type(value) is int and value >= 0 else 0


def answer_tokens(body: bytes, stream: bool) -> tuple[int, int]:
    """(prompt, completion) tokens an answer reports: the largest of each over a stream's events.
    The answer is the model server's, so untrusted: what does not parse (or nests past pydantic-core's
    parser's depth, parsed without Python recursion) or holds no sane count counts no tokens."""
    documents: list[bytes] = [body]
    if stream:
        documents = [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
    prompt = completion = 0
    for document in documents:
        try:
            p, c = _pair(from_json(document))
        except ValueError:
            continue
        prompt, completion = max(prompt, p), max(completion, c)
    return prompt, completion


class CountingPassThrough:
    """Forwards everything on a loopback port to `upstream` (a root URL) and counts the model calls."""

    def __init__(self, upstream: str, session: aiohttp.ClientSession):
        self.upstream = upstream.rstrip("/")
        self.count = ServedCount()
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
        try:
            async with self._session.request(
                request.method, self.upstream + path + query, data=body, headers=headers, allow_redirects=False
            ) as answer:
                reply_headers = {k: v for k, v in answer.headers.items() if k.lower() not in _ANSWER_HOP}
                stream = answer.content_type == "text/event-stream"
                if stream:
                    return await self._stream(request, answer, reply_headers, into if counted else [], started)
                data = await answer.read()
        except aiohttp.ClientError as exc:
            return web.Response(status=502, text=f"evalkit pass-through: the model server did not answer: {exc}")
        if counted:
            self._add(into, answer.status, data, False, time.perf_counter() - started)
        return web.Response(status=answer.status, body=data, headers=reply_headers)

    async def _stream(
        self,
        request: web.Request,
        answer: aiohttp.ClientResponse,
        headers: dict[str, str],
        into: list[ServedCount],
        started: float,
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=answer.status, headers=headers)
        await response.prepare(request)
        seen = bytearray()
        async for chunk in answer.content.iter_any():
            seen += chunk
            await response.write(chunk)
        await response.write_eof()
        if into:
            self._add(into, answer.status, bytes(seen), True, time.perf_counter() - started)
        return response

    def _add(self, into: list[ServedCount], status: int, body: bytes, stream: bool, latency_s: float) -> None:
        prompt, completion = answer_tokens(body, stream)
        for count in into:  # the server's total, and the run's when its URL named one
            count.calls += 1
            count.errors += status >= 400
            count.prompt_tokens += prompt
            count.completion_tokens += completion
            count.latency_s += latency_s
