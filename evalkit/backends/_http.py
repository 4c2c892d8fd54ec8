"""HTTP plumbing shared by the real backends: timed JSON requests, and faults mapped to `BackendError`.

The retry decision is made here, once, from the kind of failure:

    timeout, connection refused/reset, server gone mid-response   retryable
    429 and every 5xx                                              retryable
    any other 4xx                                                  not retryable (the request is wrong)
    200 with a body that is not a JSON object                      not retryable (a wrong URL, a proxy page)

Error messages carry the server's own error text, truncated, and never a header: API keys travel in
headers only, and any echo of a key in a body is blanked by `redact` before it can reach a record.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import httpx

from evalkit.errors import BackendError

__all__ = [
    "MAX_ERROR_CHARS",
    "Reply",
    "error_for_status",
    "error_for_transport",
    "get_json",
    "is_loopback",
    "join_url",
    "post_json",
    "public_url",
    "redact",
]

MAX_ERROR_CHARS = 300
_REDACTED = "[redacted]"


class Reply(NamedTuple):
    """A decoded JSON object and how long the request took."""

    body: dict[str, Any]
    latency_s: float


def redact(text: str, secrets: Iterable[str | None]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, _REDACTED)
    return text


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + "/" + path.lstrip("/")


def public_url(url: str) -> str:
    """The URL without user:password, which would otherwise land in a results header."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
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
    return BackendError(f"HTTP {status} from {response.request.url.path}: {text}", retryable=retryable,
                        status=status)


def error_for_transport(exc: httpx.RequestError, url: str) -> BackendError:
    where = public_url(url)
    if isinstance(exc, httpx.TimeoutException):
        return BackendError(f"timeout ({type(exc).__name__}) calling {where}", retryable=True)
    # a bad scheme or a request httpx cannot even form will fail the same way every time
    retryable = not isinstance(exc, (httpx.UnsupportedProtocol, httpx.LocalProtocolError))
    return BackendError(f"{type(exc).__name__} calling {where}: {_clip(str(exc))}", retryable=retryable)


def _decode(response: httpx.Response, secrets: Iterable[str | None]) -> dict[str, Any]:
    if response.status_code >= 400:
        raise error_for_status(response, secrets)
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        snippet = _clip(redact(response.text, secrets))
        raise BackendError(f"invalid JSON from {response.request.url.path} ({exc}): {snippet!r}",
                           status=response.status_code) from exc
    if not isinstance(body, dict):
        raise BackendError(f"expected a JSON object from {response.request.url.path}, got {type(body).__name__}",
                           status=response.status_code)
    return body


async def _send(client: httpx.AsyncClient, method: str, url: str, *, json_body: Any = None,
                headers: Mapping[str, str] | None = None, timeout: float | None = None,
                secrets: Iterable[str | None] = ()) -> Reply:
    secrets = tuple(secrets)
    started = time.perf_counter()
    try:
        response = await client.request(method, url, json=json_body, headers=headers,
                                        timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
    except httpx.RequestError as exc:
        raise error_for_transport(exc, url) from exc
    latency = time.perf_counter() - started
    return Reply(_decode(response, secrets), latency)


async def post_json(client: httpx.AsyncClient, url: str, payload: Mapping[str, Any], *,
                    headers: Mapping[str, str] | None = None, timeout: float | None = None,
                    secrets: Iterable[str | None] = ()) -> Reply:
    """POST `payload` as JSON; return the decoded object and the latency, or raise `BackendError`."""
    return await _send(client, "POST", url, json_body=payload, headers=headers, timeout=timeout, secrets=secrets)


async def get_json(client: httpx.AsyncClient, url: str, *, headers: Mapping[str, str] | None = None,
                   timeout: float | None = None, secrets: Iterable[str | None] = ()) -> dict[str, Any]:
    """GET a JSON object, or raise `BackendError`."""
    return (await _send(client, "GET", url, headers=headers, timeout=timeout, secrets=secrets)).body
