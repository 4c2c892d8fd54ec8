"""HTTP plumbing shared by the real backends: JSON requests under a deadline, and faults mapped to `BackendError`.

The retry decision is made here, once, from the kind of failure:

    deadline, timeout, connection refused/reset, server gone mid-response   retryable
    429 and every 5xx                                                       retryable
    a 3xx (redirects are not followed: the url should name the server)      not retryable
    any other 4xx                                                           not retryable (the request is wrong)
    200 with a body that is not a JSON object                               not retryable (a wrong URL, a proxy page)
    a decoded body larger than `max_bytes` (default 8 MiB), or undecodable  not retryable
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
from pydantic_core import from_json

from evalkit.errors import BackendError
from evalkit.results.secrets import public_url, redact, redact_data, secrets_of

__all__ = [
    "MAX_ERROR_CHARS",
    "MAX_RESPONSE_BYTES",
    "Reply",
    "error_for_status",
    "error_for_transport",
    "get_json",
    "is_loopback",
    "join_url",
    "pooled_client",
    "post_json",
    "url_problem",
]

MAX_ERROR_CHARS = 300
MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # the default cap on a decoded body; `max_response_bytes` in an entry


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


def pooled_client(concurrency: int, timeout_s: float) -> httpx.AsyncClient:
    """A client with one keep-alive connection per concurrent request, on aiohttp's transport.

    httpx's own transport (httpcore, h11, anyio) cost 1-2 ms of CPU per call against a local server;
    aiohttp's C parser under httpx's client about 0.5 ms (benchmarks/harness_overhead.py measures
    both). The client above it still builds requests and decodes bodies, so tests keep injecting an
    `httpx.AsyncClient` on an `httpx.MockTransport`. With a proxy set in the environment, httpx's
    own transport: httpx applies environment proxies only to a client that builds its transport.
    """
    from urllib.request import getproxies

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    if getproxies():
        return httpx.AsyncClient(timeout=timeout_s, limits=limits)
    from evalkit.backends._aiohttp import AiohttpTransport

    return httpx.AsyncClient(timeout=timeout_s, transport=AiohttpTransport(limits=limits))


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


class _Answer(NamedTuple):
    """What `_send` read of a response: status, request path, the decoded body, the redirect target."""

    status: int
    path: str
    body: bytes
    location: str

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def _server_message(answer: _Answer) -> str:
    """The error text a server put in its body: OpenAI/llama.cpp, Anthropic and Ollama shapes."""
    try:
        body = from_json(answer.body)
    except ValueError:  # not JSON, not UTF-8, or nested past the parser's limit
        return answer.text()
    if isinstance(body, dict):
        error = body.get("error", body.get("message"))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return error if isinstance(error, str) else json.dumps(error)
    return json.dumps(body)


def error_for_status(answer: _Answer, secrets: Iterable[str | None] = ()) -> BackendError:
    status = answer.status
    text = _clip(redact(_server_message(answer), secrets))
    retryable = status == 429 or status >= 500
    return BackendError(f"HTTP {status} from {answer.path}: {text}", retryable=retryable, status=status)


def error_for_transport(exc: httpx.RequestError, url: str, secrets: Iterable[str | None] = ()) -> BackendError:
    where = public_url(url)
    if isinstance(exc, httpx.TimeoutException):
        return BackendError(f"timeout ({type(exc).__name__}) calling {where}", retryable=True)
    # a bad scheme or a request httpx cannot even form will fail the same way every time
    retryable = not isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError))
    text = _clip(redact(str(exc), (*secrets, *secrets_of(url))))
    return BackendError(f"{type(exc).__name__} calling {where}: {text}", retryable=retryable)


def _redirect(answer: _Answer, secrets: tuple[str | None, ...]) -> BackendError:
    # the target may carry a credential anywhere (path, query, user info): shown through public_url,
    # with the backend's secrets blanked in every encoding
    target = public_url(redact(answer.location, secrets)) if answer.location else ""
    return BackendError(
        f"HTTP {answer.status} from {answer.path}: a redirect to {target or 'nowhere (no Location header)'}, "
        "not followed (set the backend's url to the address it names)",
        status=answer.status,
    )


def _decode(answer: _Answer, secrets: tuple[str | None, ...]) -> dict[str, Any]:
    if answer.status >= 400:
        raise error_for_status(answer, secrets)
    if 300 <= answer.status < 400:
        raise _redirect(answer, secrets)
    try:
        body = from_json(answer.body)
    # not JSON, not UTF-8, or nested deeper than pydantic-core's parser allows (200 levels, parsed
    # without Python recursion): a server's reply is untrusted, and no real one nests that deep
    except ValueError as exc:
        snippet = _clip(redact(answer.text(), secrets))
        raise BackendError(f"invalid JSON from {answer.path} ({exc}): {snippet!r}", status=answer.status) from exc
    if not isinstance(body, dict):
        raise BackendError(
            f"expected a JSON object from {answer.path}, got {type(body).__name__}", status=answer.status
        )
    # a server may echo the key even in a successful answer; blank it before anything keeps the body
    blanked: dict[str, Any] = redact_data(body, secrets)
    return blanked


def _too_large(limit: int, path: str, status: int, what: str) -> BackendError:
    return BackendError(
        f"response from {path} too large: {what} exceeds max_response_bytes ({limit:,} bytes); "
        "raise the backend's max_response_bytes if the answer is legitimate",
        status=status,
    )


async def _read_capped(response: httpx.Response, limit: int) -> _Answer:
    """The decoded body, read chunk by chunk and abandoned as soon as it passes `limit` bytes.

    The limit applies after decompression, so a small gzip body that inflates past it (a
    decompression bomb) stops here too, with at most one chunk's inflation held at once.
    """
    path = response.request.url.path
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and "content-encoding" not in response.headers and int(declared) > limit:
        raise _too_large(limit, path, response.status_code, f"its Content-Length {int(declared):,}")
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, path, response.status_code, "the decoded body")
        parts.append(chunk)
    return _Answer(response.status_code, path, b"".join(parts), response.headers.get("location", ""))


async def _send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Reply:
    secrets = (*secrets, *secrets_of(url))
    started = time.perf_counter()
    try:
        async with asyncio.timeout(deadline_s):
            async with client.stream(
                method,
                url,
                json=json_body,
                headers=headers,
                timeout=deadline_s if deadline_s is not None else httpx.USE_CLIENT_DEFAULT,
            ) as response:
                answer = await _read_capped(response, max_bytes)
    except TimeoutError as exc:
        raise BackendError(
            f"deadline: no complete answer within {deadline_s:g} s from {public_url(url)}", retryable=True
        ) from exc
    except httpx.InvalidURL as exc:
        raise BackendError(f"invalid URL {public_url(url)!r}: {redact(str(exc), secrets)}") from exc
    except httpx.DecodingError as exc:
        raise BackendError(f"undecodable response from {public_url(url)}: {_clip(str(exc))}") from exc
    except httpx.RequestError as exc:
        raise error_for_transport(exc, url, secrets) from exc
    latency = time.perf_counter() - started
    return Reply(_decode(answer, secrets), latency)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Reply:
    """POST `payload` as JSON under a whole-call deadline; return the decoded object and the latency,
    or raise `BackendError`."""
    return await _send(
        client,
        "POST",
        url,
        json_body=payload,
        headers=headers,
        deadline_s=deadline_s,
        secrets=secrets,
        max_bytes=max_bytes,
    )


async def get_json(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    deadline_s: float | None = None,
    secrets: Iterable[str | None] = (),
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> dict[str, Any]:
    """GET a JSON object under a whole-call deadline, or raise `BackendError`."""
    reply = await _send(
        client, "GET", url, headers=headers, deadline_s=deadline_s, secrets=secrets, max_bytes=max_bytes
    )
    return reply.body
