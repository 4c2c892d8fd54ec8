"""What `evalkit serve sim` grants a client: body size, read time, connections, and its error answers.

- **Bodies** are read by `read_json`, not by aiohttp: the raw body is counted as it arrives (past
  `max_body_bytes` it is refused with 413 at once) within `body_timeout_s` (else 408), and a gzip or
  deflate body is inflated here, in chunks that are counted (a gzip bomb is refused while it
  inflates, never after) and that hand the event loop back between them (so a SIGTERM is handled
  while it inflates). Nothing of a refused body outlives its answer: the buffers are emptied before
  the refusal is raised, so no traceback keeps them until a garbage collection.
- **Connections**: an idle connection (no request in progress) is closed after `idle_timeout_s`, which
  is also the time a client has to send a request's headers; past `max_connections` (half the
  process's file descriptors less a margin, at most 1,000) a new connection closes the oldest idle one, so idle
  clients cannot exhaust the descriptors and lock out new ones.
- **Errors**: every error answer, from aiohttp's HTTP parsing (a bad header) and routing (404, 405) to
  the body reader and the request
  validation (`RequestError`), is JSON in the protocol's own error shape: OpenAI's
  `{"error": {"message", "type", "param", "code"}}`, Anthropic's `{"type": "error", "error": {"type",
  "message"}}` on `/v1/messages`. A client's mistake is a 4xx and prints nothing on the server.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from pydantic_core import from_json

from evalkit.errors import EvalkitError

__all__ = ["ConnectionGate", "RequestError", "ServeLimits", "error_response", "json_errors", "log", "read_json"]

# the simulated server's log: the CLI shows its records as `evalkit serve sim: ...` (evalkit/cli/__init__.py)
log = logging.getLogger("evalkit.serve_sim")

_INFLATE_CHUNK = 1 << 20  # inflated bytes per step; the event loop runs between steps
_ENCODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_ANTHROPIC_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _connection_share() -> int:
    try:
        import resource
    except ImportError:  # no descriptor limit to read (Windows): the fixed ceiling
        return 1000
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    # a margin for the descriptors of one batch of accepts (asyncio's backlog, 100) before evictions close
    return 1000 if soft == resource.RLIM_INFINITY else max(8, min(1000, (soft - 100) // 2))


@dataclass(frozen=True)
class ServeLimits:
    """The server's limits (the module docstring says what each one bounds)."""

    max_body_bytes: int = 16 << 20  # raw and inflated; a 128k-token conversation is well under 1 MB
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 15.0
    max_connections: int = field(default_factory=_connection_share)


class RequestError(EvalkitError):
    """A request the server refuses: the client's mistake, answered with `status` (a 4xx)."""

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.param, self.code = status, param, code


def _anthropic(path: str) -> bool:
    return path.rstrip("/").endswith("/messages") or path.startswith("/v1/messages")


def error_response(
    path: str, status: int, message: str, *, param: str | None = None, code: str | None = None
) -> web.Response:
    """An error answer in the shape of the protocol `path` belongs to."""
    if _anthropic(path):
        kind = _ANTHROPIC_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        kind = "invalid_request_error" if status < 500 else "server_error"
        body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(body, status=status)


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error answer as JSON in the protocol's shape (the module docstring)."""
    try:
        return await handler(request)
    except RequestError as exc:
        return error_response(request.path, exc.status, str(exc), param=exc.param, code=exc.code)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = "unknown_url" if exc.status == 404 else None
        message = f"{exc.reason}: {request.method} {request.path[:200]}"
        answer = error_response(request.path, exc.status, message, code=code)
        if "Allow" in exc.headers:  # a 405 says which methods the path takes
            answer.headers["Allow"] = exc.headers["Allow"]
        return answer
    except Exception:  # a bug of the server, not the client's mistake: its traceback is wanted
        log.exception("error answering %s %s:", request.method, request.path[:200])
        return error_response(request.path, 500, "the simulated server failed: see its log")


async def _read_raw(request: web.Request, limits: ServeLimits) -> bytearray:
    if (request.content_length or 0) > limits.max_body_bytes:
        raise RequestError(413, f"the body is larger than {limits.max_body_bytes} bytes")
    body = bytearray()
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            async for chunk in request.content.iter_any():
                body += chunk
                if len(body) > limits.max_body_bytes:
                    body.clear()  # freed now, not when the refusal's traceback is collected
                    raise RequestError(413, f"the body is larger than {limits.max_body_bytes} bytes")
    except TimeoutError:
        body.clear()
        raise RequestError(408, f"the body did not arrive within {limits.body_timeout_s:g} s") from None
    return body


async def _inflate(raw: bytearray, encoding: str, limits: ServeLimits) -> bytearray:
    """`raw` inflated in counted chunks; refused as soon as the count passes the body limit."""
    wbits = _ENCODINGS[encoding]
    if encoding == "deflate" and raw[:1] and raw[0] & 0x0F != 8:  # a raw deflate stream (no zlib header)
        wbits = -zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    out, pending = bytearray(), bytes(raw)
    raw.clear()
    try:
        while not inflater.eof:
            piece = inflater.decompress(pending, _INFLATE_CHUNK)
            pending = inflater.unconsumed_tail
            out += piece
            if len(out) > limits.max_body_bytes:
                out.clear()
                raise RequestError(413, f"the body inflates to more than {limits.max_body_bytes} bytes")
            if not piece and not pending:
                break
            await asyncio.sleep(0)  # let the loop run: other clients, a signal's handler
    except zlib.error as exc:
        out.clear()
        raise RequestError(400, f"the body is not valid {encoding} data: {exc}", param="Content-Encoding") from None
    if not inflater.eof:
        raise RequestError(400, f"the {encoding} body is cut short", param="Content-Encoding")
    return out


async def read_json(request: web.Request, limits: ServeLimits) -> Any:
    """The request's JSON body within `limits` (the module docstring); a `RequestError` otherwise."""
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower() or "identity"
    if encoding != "identity" and encoding not in _ENCODINGS:
        raise RequestError(415, f"Content-Encoding {encoding[:40]!r} is not one of gzip, deflate, identity")
    body = await _read_raw(request, limits)
    if encoding != "identity":
        body = await _inflate(body, encoding, limits)
    try:  # pydantic-core parses without Python recursion: a body nested 100,000 deep is a 400
        return from_json(body)
    except ValueError as exc:
        raise RequestError(400, f"the body is not JSON: {exc}") from None
    finally:
        body.clear()


class _JsonErrorProtocol(RequestHandler):
    """aiohttp's protocol, with its own error answers (a request it cannot parse: a bad header, a line
    too long) as JSON in the protocol's shape, and no traceback logged for a client's mistake."""

    __slots__ = ()

    def handle_error(
        self, request: Any, status: int = 500, exc: BaseException | None = None, message: str | None = None
    ) -> web.StreamResponse:
        if status >= 500:
            return super().handle_error(request, status, exc, message)
        if request.writer.output_size > 0:  # as aiohttp: an answer already began, the connection is broken
            raise ConnectionError("an answer was sent already: no error answer can follow it")
        answer = error_response(request.path, status, message or f"the request is not valid HTTP ({status})")
        answer.force_close()
        return answer


class ConnectionGate:
    """At most `limit` connections: a new one past it closes the oldest idle ones (module docstring)."""

    def __init__(self, limit: int, idle_timeout_s: float):
        self.limit, self.idle_timeout_s = limit, idle_timeout_s
        self._busy: set[object] = set()  # the connections whose request is being answered
        self._silent: set[RequestHandler] = set()  # connected, no request yet: closed at the idle timeout

    @web.middleware
    async def track(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self._silent.discard(request.protocol)
        self._busy.add(request.protocol)
        try:
            return await handler(request)
        finally:
            self._busy.discard(request.protocol)

    def protocols(self, runner: web.BaseRunner) -> Callable[[], asyncio.BaseProtocol]:
        """The protocol factory to listen with: `runner`'s, behind the limit."""

        def accept() -> asyncio.BaseProtocol:
            server = runner.server
            assert server is not None, "listen after runner.setup()"
            live = [h for h in server.connections if h.transport is not None]
            idle = [h for h in live if h not in self._busy]
            for handler in idle[: max(0, len(live) + 1 - self.limit)]:
                handler.force_close()
            protocol = server()
            # aiohttp builds its protocol with no way to name a subclass: the same object, our error answers
            protocol.__class__ = _JsonErrorProtocol
            # aiohttp's keep-alive timer closes a connection idle after an answer; before aiohttp 3.14 nothing
            # closed one that never sent a whole request: this timer does (it is the header timeout)
            self._silent.add(protocol)
            asyncio.get_running_loop().call_later(self.idle_timeout_s, self._close_if_silent, protocol)
            return protocol

        return accept

    def _close_if_silent(self, protocol: RequestHandler) -> None:
        if protocol in self._silent:
            self._silent.discard(protocol)
            protocol.force_close()

    async def listen(self, runner: web.BaseRunner, host: str, port: int) -> asyncio.Server:
        """Listen on `host:port` for `runner`'s application; close the result before `runner.cleanup()`."""
        return await asyncio.get_running_loop().create_server(self.protocols(runner), host, port)
