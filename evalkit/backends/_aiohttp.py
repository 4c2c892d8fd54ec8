"""httpx-aiohttp's transport, with aiohttp's faults named as httpx's own transport names them.

`httpx_aiohttp` maps every `aiohttp.ClientConnectionError` to `httpx.ConnectTimeout`, so a server
that drops the connection mid-answer would read as a timeout. `_http.error_for_transport` decides
retries and writes the error text from the httpx class, so the classes here follow httpcore's:
refused -> `ConnectError`, closed or cut short -> `RemoteProtocolError`, reset -> `ReadError`,
a socket timeout -> `ReadTimeout` or `ConnectTimeout`. tests/backends/test_transport.py holds both
transports against each other on every fault kind of tests/faultserver.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport as _Base

__all__ = ["AiohttpTransport"]


def _httpx_error(exc: BaseException, request: httpx.Request) -> httpx.TransportError | None:
    """The httpx exception httpcore raises for the aiohttp failure `exc`, or None for one not mapped."""
    cause = exc.__cause__ if isinstance(exc, httpx.TransportError) and exc.__cause__ is not None else exc
    text = str(cause) or type(cause).__name__
    kind: type[httpx.TransportError] | None = None
    if isinstance(cause, aiohttp.ConnectionTimeoutError):
        kind = httpx.ConnectTimeout
    elif isinstance(cause, (aiohttp.ServerTimeoutError, TimeoutError)):
        kind = httpx.ReadTimeout
    elif isinstance(cause, aiohttp.ClientConnectorError):
        kind = httpx.ConnectError
    elif isinstance(cause, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError)):
        kind = httpx.RemoteProtocolError  # closed, cut short, or a status line or headers that do not parse
    elif isinstance(cause, (aiohttp.ClientOSError, OSError)):
        kind = httpx.ReadError
    elif isinstance(exc, httpx.TransportError):
        return exc
    return kind(text, request=request) if kind is not None else None


class _Body(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, request: httpx.Request):
        self._inner = inner
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                yield chunk
        except (aiohttp.ClientError, httpx.TransportError, OSError) as exc:
            mapped = _httpx_error(exc, self._request)
            if mapped is None:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        await self._inner.aclose()


class AiohttpTransport(_Base):
    """`httpx_aiohttp.AiohttpTransport` raising the httpx exceptions httpcore would raise."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.userinfo:  # httpx's client already sent it as Basic auth; aiohttp refuses both
            request.url = request.url.copy_with(userinfo=b"")
        try:
            response = await super().handle_async_request(request)
        except (aiohttp.ClientError, httpx.TransportError, OSError) as exc:
            mapped = _httpx_error(exc, request)
            if mapped is None:
                raise
            raise mapped from exc
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Body(response.stream, request)
        return response
