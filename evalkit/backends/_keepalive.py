"""A lean HTTP/1.1 keep-alive transport for plain-http servers, under the usual `httpx.AsyncClient`.

Against a local server (llama-server, Ollama, vLLM on the same host) the harness's CPU per call was
mostly httpcore, h11 and anyio: about 1.1 ms per call at concurrency 1 and 1.5 ms at 32 on a 2-core
machine, against 30 µs for evalkit's own request building and parsing. The requests evalkit makes
are simple (a JSON body, a JSON answer, no streaming, no upgrades), so for `http://` URLs this
transport writes the request and parses the answer over asyncio streams itself, keeping one idle
connection per concurrent run. Everything else (`https://`, which needs TLS) goes to the `fallback`
transport, httpx's own. The client above it still builds the request (headers, auth, JSON) and
decodes the body (`Content-Encoding`), so a backend cannot tell the two apart.

Faults surface as the httpx exceptions httpcore raises for them (`ConnectError`, `ReadError`,
`RemoteProtocolError`, `ConnectTimeout`), so `_http.error_for_transport` classifies both paths the
same way; tests/backends/test_keepalive.py holds the two transports against each other on every
fault kind of tests/faultserver.py. As with httpcore, a kept-alive connection is polled before it
is reused, so one the server closed while idle is dropped, and a request is never sent twice: a
server that closes as the request arrives is an error the retry policy sees and counts.
"""

from __future__ import annotations

import asyncio
import select
from typing import Any

import httpx

__all__ = ["KeepAliveTransport", "read_response"]

_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_NO_BODY = frozenset({204, 304})


class _Stale(Exception):
    """The server closed the connection before the first byte of an answer."""


def _protocol_error(message: str, request: httpx.Request) -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(message, request=request)


async def _read_chunked(reader: asyncio.StreamReader, request: httpx.Request) -> bytes:
    parts: list[bytes] = []
    while True:
        line = await reader.readuntil(b"\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise _protocol_error(f"malformed chunk size line {line[:40]!r}", request) from None
        if size < 0:
            raise _protocol_error(f"malformed chunk size line {line[:40]!r}", request)
        if size == 0:
            while (await reader.readuntil(b"\n")).strip():  # trailers, up to the blank line
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if (await reader.readuntil(b"\n")).strip():
            raise _protocol_error("chunk data longer than its declared size", request)


async def read_response(
    reader: asyncio.StreamReader,
    request: httpx.Request,
) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    """Status, headers, body and whether the connection may be kept, read from `reader`.

    Raises `_Stale` when the server closed before the first byte, `httpx.RemoteProtocolError` when
    the answer is not HTTP/1.x or is cut short.
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        while head[9:10] == b"1" and head.startswith(b"HTTP/1."):  # 100 Continue and friends: skip
            head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _Stale from None
        raise _protocol_error("server disconnected without sending a complete response", request) from None
    except asyncio.LimitOverrunError:
        raise _protocol_error("response headers too long", request) from None
    lines = head[:-4].split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    try:
        status = int(rest[:3])
    except ValueError:
        status = 0
    if not version.startswith(b"HTTP/1.") or not 100 <= status <= 999:
        raise _protocol_error(f"not an HTTP/1.x status line: {lines[0][:60]!r}", request)
    headers: list[tuple[bytes, bytes]] = []
    length: int | None = None
    chunked, keep = False, version == b"HTTP/1.1"
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            raise _protocol_error(f"malformed header line {line[:60]!r}", request)
        name, value = name.strip(), value.strip()
        headers.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length":
            try:
                length = int(value)
            except ValueError:
                raise _protocol_error(f"bad Content-Length {value[:20]!r}", request) from None
        elif lowered == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif lowered == b"connection":
            keep = (keep or b"keep-alive" in value.lower()) and b"close" not in value.lower()
    try:
        if request.method == "HEAD" or status in _NO_BODY:
            body = b""
        elif chunked:
            body = await _read_chunked(reader, request)
        elif length is not None:
            body = await reader.readexactly(length)
        else:  # the body runs to the end of the connection
            body, keep = await reader.read(), False
    except asyncio.IncompleteReadError:
        raise _protocol_error("peer closed connection without sending complete message body", request) from None
    except asyncio.LimitOverrunError:
        raise _protocol_error("chunk size line too long", request) from None
    return status, headers, body, keep


def _request_head(request: httpx.Request) -> bytes:
    # httpx has already set Host, Content-Length, the client's headers and any auth
    lines = [request.method.encode("ascii") + b" " + request.url.raw_path + b" HTTP/1.1"]
    lines.extend(name + b": " + value for name, value in request.headers.raw)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _close(connection: _Connection) -> None:
    connection[1].close()


def _gone(connection: _Connection) -> bool:
    """Whether an idle connection was closed by the server (or sent something unasked).

    An idle connection has nothing to read; if its socket is readable, what is there is an end of
    file, a reset or stray bytes, and the connection cannot carry a request. The event loop may not
    have seen it yet, so the socket itself is polled, as httpcore does.
    """
    reader, writer = connection
    if reader.at_eof() or writer.is_closing():
        return True
    sock = writer.get_extra_info("socket")
    if sock is None:
        return False
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """`http://` requests over kept-alive asyncio connections; every other scheme to `fallback`."""

    def __init__(self, fallback: httpx.AsyncBaseTransport, *, max_idle: int):
        self._fallback = fallback
        self._max_idle = max(1, max_idle)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    async def _connect(self, host: str, port: int, request: httpx.Request) -> _Connection:
        timeout: dict[str, Any] = request.extensions.get("timeout") or {}
        try:
            async with asyncio.timeout(timeout.get("connect")):
                return await asyncio.open_connection(host, port)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} in time", request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc

    def _checkout(self, key: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not _gone(connection):
                return connection
            _close(connection)
        return None

    def _checkin(self, key: tuple[str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._max_idle:
            idle.append(connection)
        else:
            _close(connection)

    async def _exchange(
        self,
        connection: _Connection,
        message: bytes,
        request: httpx.Request,
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
        reader, writer = connection
        timeout: dict[str, Any] = request.extensions.get("timeout") or {}
        try:
            writer.write(message)
            await writer.drain()
            async with asyncio.timeout(timeout.get("read")):
                return await read_response(reader, request)
        except TimeoutError:
            raise httpx.ReadTimeout("no complete answer within the read timeout", request=request) from None
        except _Stale:
            raise httpx.RemoteProtocolError("server disconnected without sending a response", request=request) from None
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from exc

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http" or not isinstance(request.stream, httpx.ByteStream):
            return await self._fallback.handle_async_request(request)
        key = (url.host, url.port or 80)
        connection = self._checkout(key) or await self._connect(*key, request)
        try:
            status, headers, body, keep = await self._exchange(
                connection, _request_head(request) + request.content, request
            )
        except BaseException:  # a cancelled or failed exchange leaves the connection mid-message
            _close(connection)
            raise
        if keep:
            self._checkin(key, connection)
        else:
            _close(connection)
        return httpx.Response(
            status, headers=headers, stream=httpx.ByteStream(body), extensions={"http_version": b"HTTP/1.1"}
        )

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                _close(connection)
        self._idle.clear()
        await self._fallback.aclose()
