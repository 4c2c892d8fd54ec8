"""Backends: a registry of kinds, and building one from a config entry.

Each real backend gets one `httpx.AsyncClient` injected, so tests pass an `httpx.MockTransport`
and nothing in the default test run touches the network.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evalkit._imports import load_class
from evalkit.backends.base import Backend, Feature, RetryPolicy, call_with_retries
from evalkit.backends.entry import BACKENDS, BackendEntry
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    import httpx


__all__ = [
    "BACKENDS",
    "Backend",
    "Feature",
    "RetryPolicy",
    "call_with_retries",
    "create_backend",
    "http_client",
    "key_required",
    "needs_http_client",
]

# where a kind reads its key when the config names no variable
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
# kinds that call a server over HTTP, so their url must be one httpx can call
_HTTP_KINDS = frozenset({"llama-server", "ollama", "anthropic", "openai"})


def http_client(entry: BackendEntry) -> httpx.AsyncClient:
    """The client for one backend entry: a keep-alive connection per concurrent run.

    httpx keeps 20 idle connections by default, so at a higher concurrency every extra request
    opened and closed a connection (5 ms of CPU per call at concurrency 32 against a local stub).
    """
    from evalkit.backends._http import pooled_client

    return pooled_client(entry.concurrency, entry.timeout_s)


def needs_http_client(kind: str) -> bool:
    """Whether a kind calls a server (and so takes an `httpx.AsyncClient`); sim and replay do not."""
    return kind in _HTTP_KINDS


def key_required(entry: BackendEntry) -> bool:
    """A key is needed when the config names its variable, or for a hosted API at its default address
    (a local OpenAI-compatible server, llama-server's Messages API or servers evalkit starts need none)."""
    return bool(entry.api_key_env) or (
        entry.kind in DEFAULT_KEY_ENV and entry.url is None and not entry.endpoint_list() and entry.serve is None
    )


def create_backend(entry: BackendEntry, client: httpx.AsyncClient | None) -> Backend:
    """Build the backend for a config entry. The API key is read here and kept out of every record.

    `client` may be None only for a kind that needs none (`needs_http_client`)."""
    if entry.endpoint_list():  # several servers: one backend each, balanced by a pool
        if client is None:
            raise ConfigError(f"backend {entry.label!r}: kind {entry.kind!r} takes no endpoint list")
        return _pool(entry, client)
    target = BACKENDS.get(entry.kind)
    if target is None:
        raise ConfigError(f"backend {entry.label!r}: unknown kind {entry.kind!r} (known: {', '.join(BACKENDS)})")
    if entry.kind in _HTTP_KINDS and entry.url is not None:
        from evalkit.backends._http import url_problem

        problem = url_problem(entry.url)
        if problem:
            raise ConfigError(f"backend {entry.label!r}: url {problem}")
    env_name = entry.api_key_env or DEFAULT_KEY_ENV.get(entry.kind)
    if client is None and needs_http_client(entry.kind):
        raise ConfigError(f"backend {entry.label!r}: kind {entry.kind!r} needs an HTTP client")
    kwargs: dict[str, Any] = {"entry": entry, "client": client}
    if env_name:
        key = os.environ.get(env_name)
        if key_required(entry) and not key:
            why = "" if entry.api_key_env else f" (kind {entry.kind} at its default url needs a key)"
            raise ConfigError(f"backend {entry.label!r}: environment variable {env_name} is not set{why}")
        kwargs["api_key"] = key
    backend: Backend = load_class(target)(**kwargs)
    return backend


def _pool(entry: BackendEntry, client: httpx.AsyncClient) -> Backend:
    """One backend per endpoint of `entry` (sharing the client and its connection pool), balanced."""
    from evalkit.backends.pool import Endpoint, PoolBackend

    endpoints = []
    for settings in entry.endpoint_list():
        single = entry.model_copy(update={"url": settings.url, "urls": None, "endpoints": None})
        endpoints.append(Endpoint(settings.url, create_backend(single, client), settings.concurrency))
    return PoolBackend(entry, endpoints)
