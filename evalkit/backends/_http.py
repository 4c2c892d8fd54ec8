"""HTTP plumbing shared by the real backends: JSON requests under a deadline, and faults mapped to `BackendError`.

The retry decision is made here, once, from the kind of failure:

    deadline, timeout, connection refused/reset, server gone mid-response   retryable
    429 and every 5xx                                                       retryable
    a 3xx (redirects are not followed: the url should name the server)      not retryable
    any other 4xx                                                           not retryable (the request is wrong)
    200 with a body that is not a JSON object                               not retryable (a wrong URL, a proxy page)
    a URL httpx cannot parse                                                not retryable

`deadline_s` bounds the whole call (connect, send, every read): a server that drips its answer one
byte at a time never trips httpx's per-read timeout, so the call runs under `asyncio.timeout` too.

Error messages carry the server's own error text, truncated, and never a header: API keys travel in
headers only, and every body (an error's or a successful answer's) has the backend's secrets blanked
by `evalkit.results.secrets` before it can reach a record.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import httpx

from evalkit.errors import BackendError
from evalkit.results.secrets import public_url, redact, redact_data, secrets_of

__all__ = [
    "MAX_ERROR_CHARS",
    "Reply",
    "error_for_status",
    "error_for_transport",
    "get_json",
    "is_loopback",
    "join_url",
    "pooled_client",
    "post_json",
    "public_url",
    "redact",
    "url_problem",
]

MAX_ERROR_CHARS = 300


class Reply(NamedTuple):
    """A decoded JSON object and how long the request took."""

    body: dict[str, Any]
    latency_s: float


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def join_url(base: str, path: str) -> str:
    """`path` appended to the base URL's path; the base's query string (`?key=…`, `?api-version=…`) is kept."""
    try:
        parts = urlsplit(base)
    except ValueError:  # left for httpx to refuse, with the error _send turns into a BackendError
        return base.rstrip("/") + "/" + path.lstrip("/")
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


POOL_SIZE = 8  # connections per httpcore pool


class _PoolShards(httpx.AsyncBaseTransport):
    """Requests spread over several connection pools, each to the one with the fewest in flight.

    httpcore walks every connection of its pool several times per request, so CPU per call grows
    with the pool; pools of at most POOL_SIZE kept-alive connections keep that walk short.
    """

    def __init__(self, shards: list[httpx.AsyncHTTPTransport]):
        self._shards = shards
        self._busy = [0] * len(shards)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = self._busy.index(min(self._busy))
        self._busy[index] += 1
        try:
            return await self._shards[index].handle_async_request(request)
        finally:  # the body is read right after by the (non-streaming) client: close enough to done
            self._busy[index] -= 1

    async def aclose(self) -> None:
        for shard in self._shards:
            await shard.aclose()


def pooled_client(concurrency: int, timeout_s: float) -> httpx.AsyncClient:
    """A client with one keep-alive connection per concurrent request.

    `http://` goes through `KeepAliveTransport` (a lean HTTP/1.1 path: httpcore's CPU per call was
    most of the harness's against a local server); `https://` through httpx's own transports, in
    pools of at most POOL_SIZE. With a proxy set in the environment, httpx's client alone: httpx
    applies environment proxies only to a client that builds its own transport. A pool may open a
    connection beyond its share rather than make a request wait (a rare, short-lived extra).
    """
    from urllib.request import getproxies

    from evalkit.backends._keepalive import KeepAliveTransport

    shards = -(-concurrency // POOL_SIZE)
    if getproxies():
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        return httpx.AsyncClient(timeout=timeout_s, limits=limits)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=-(-concurrency // shards))
    secure: httpx.AsyncBaseTransport = (
        httpx.AsyncHTTPTransport(limits=limits)
        if shards == 1
        else _PoolShards([httpx.AsyncHTTPTransport(limits=limits) for _ in range(shards)])
    )
    return httpx.AsyncClient(timeout=timeout_s, transport=KeepAliveTransport(secure, max_idle=concurrency))


def url_problem(url: str) -> str | None:
    """Why httpx could not call `url` (None when it can): checked before a run, so a typo is a config error."""
    if not url.strip():
        return "is empty (leave url out for the kind's default)"
    if any(ch.isspace() or ord(ch) < 32 for ch in url):
        return f"{public_url(url)!r} contains whitespace or control characters"
    try:
        parsed = httpx.URL(url)
        port = parsed.port  # reading the port is a check (`:abc`)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        return f"{public_url(url)!r} is not a URL ({redact(str(exc), secrets_of(url))})"
    if port is not None and not 1 <= port <= 65535:  # httpx takes `:99999`; the connect then overflows
        return f"{public_url(url)!r} is not a URL (port {port} is not in 1-65535)"
    if parsed.scheme not in ("http", "https"):
        return f"{public_url(url)!r} needs an http:// or https:// scheme"
    if not parsed.host:
        return f"{public_url(url)!r} names no host"
    return None


def is_loopback(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _server_message(response: httpx.Response) -> str:
    """The error text a server put in its body: OpenAI/llama.cpp, Anthropic and Ollama shapes."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text
    if isinstance(body, dict):
        error = body.get("error", body.get("message"))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return error if isinstance(error, str) else json.dumps(error)
    return json.dumps(body)


def error_for_status(response: httpx.Response, secrets: Iterable[str | None] = ()) -> BackendError:
    status = response.status_code
    text = _clip(redact(_server_message(response), secrets))
    retryable = status == 429 or status >= 500
    return BackendError(f"HTTP {status} from {response.request.url.path}: {text}", retryable=retryable, status=status)


def error_for_transport(exc: httpx.RequestError, url: str, secrets: Iterable[str | None] = ()) -> BackendError:
    where = public_url(url)
    if isinstance(exc, httpx.TimeoutException):
        return BackendError(f"timeout ({type(exc).__name__}) calling {where}", retryable=True)
    # a bad scheme or a request httpx cannot even form will fail the same way every time
    retryable = not isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError))
    text = _clip(redact(str(exc), (*secrets, *secrets_of(url))))
    return BackendError(f"{type(exc).__name__} calling {where}: {text}", retryable=retryable)


def _redirect(response: httpx.Response) -> BackendError:
    target = public_url(response.headers.get("location", "")) or "nowhere (no Location header)"
    return BackendError(
        f"HTTP {response.status_code} from {response.request.url.path}: a redirect to {target}, "
        "not followed (set the backend's url to the address it names)",
        status=response.status_code,
    )


def _decode(response: httpx.Response, secrets: tuple[str | None, ...]) -> dict[str, Any]:
    if response.status_code >= 400:
        raise error_for_status(response, secrets)
    if 300 <= response.status_code < 400:
        raise _redirect(response)
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        snippet = _clip(redact(response.text, secrets))
        raise BackendError(
            f"invalid JSON from {response.request.url.path} ({exc}): {snippet!r}", status=response.status_code
        ) from exc
    if not isinstance(body, dict):
        raise BackendError(
            f"expected a JSON object from {response.request.url.path}, got {type(body).__name__}",
            status=response.status_code,
        )
    # a server may echo the key even in a successful answer; blank it before anything keeps the body
    blanked: dict[str, Any] = redact_data(body, secrets)
    return blanked


async def _send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
) -> Reply:
    secrets = (*secrets, *secrets_of(url))
    started = time.perf_counter()
    try:
        async with asyncio.timeout(deadline_s):
            response = await client.request(
                method,
                url,
                json=json_body,
                headers=headers,
                timeout=deadline_s if deadline_s is not None else httpx.USE_CLIENT_DEFAULT,
            )
    except TimeoutError as exc:
        raise BackendError(
            f"deadline: no complete answer within {deadline_s:g} s from {public_url(url)}", retryable=True
        ) from exc
    except httpx.InvalidURL as exc:
        raise BackendError(f"invalid URL {public_url(url)!r}: {redact(str(exc), secrets)}") from exc
    except httpx.RequestError as exc:
        raise error_for_transport(exc, url, secrets) from exc
    latency = time.perf_counter() - started
    return Reply(_decode(response, secrets), latency)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
) -> Reply:
    """POST `payload` as JSON under a whole-call deadline; return the decoded object and the latency,
    or raise `BackendError`."""
    return await _send(client, "POST", url, json_body=payload, headers=headers, deadline_s=deadline_s, secrets=secrets)


async def get_json(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
) -> dict[str, Any]:
    """GET a JSON object under a whole-call deadline, or raise `BackendError`."""
    return (await _send(client, "GET", url, headers=headers, deadline_s=deadline_s, secrets=secrets)).body
