"""Backends: the registry of kinds, read from the backend classes, and building one from a config entry.

A kind is one module with one class that declares `kind`, `speaks_http` and `key_env`
(`evalkit.backends.base.BackendKind`), and one line in `BACKENDS` below (docs/backends.md, "Writing a
backend"). Everything else known of a kind is read from its class: whether it is built with an HTTP
client and its url checked, where its key is read. Each real backend gets one `httpx.AsyncClient`
injected, so tests pass an `httpx.MockTransport` and nothing in the default test run touches the
network. The backend modules import httpx only when they first call a server, so importing them all
here keeps `evalkit list` and `validate` light (tests/cli/test_startup.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evalkit.backends.anthropic import AnthropicBackend
from evalkit.backends.base import KIND_DECLARATIONS, Backend, BackendKind
from evalkit.backends.llama_server import LlamaServerBackend
from evalkit.backends.ollama import OllamaBackend
from evalkit.backends.openai import OpenAIBackend
from evalkit.backends.replay import ReplayBackend
from evalkit.backends.sim import SimulatedBackend
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    import httpx

    from evalkit.backends.settings import BackendSettings

__all__ = [
    "BACKENDS",
    "create_backend",
    "http_client",
    "key_env",
    "key_required",
    "needs_http_client",
    "registry",
]


def registry(classes: Iterable[BackendKind]) -> dict[str, BackendKind]:
    """kind -> class. A class that leaves out one of `KIND_DECLARATIONS`, or gives a kind another
    class gives, is an error here, when `evalkit.backends` is imported (so in every test run)."""
    found: dict[str, BackendKind] = {}
    for cls in classes:
        missing = [name for name in KIND_DECLARATIONS if not hasattr(cls, name)]
        if missing:
            raise TypeError(f"backend class {_name(cls)} does not declare {', '.join(missing)}")
        if not isinstance(cls.kind, str) or not cls.kind or not isinstance(cls.speaks_http, bool):
            raise TypeError(f"backend class {_name(cls)}: kind must be a name, speaks_http True or False")
        if cls.kind in found:
            raise TypeError(f"backend kind {cls.kind!r} is declared by {_name(found[cls.kind])} and {_name(cls)}")
        found[cls.kind] = cls
    return found


def _name(cls: BackendKind) -> str:
    return f"{cls.__module__}.{getattr(cls, '__qualname__', cls)}"


# One line per kind: the one list of them.
BACKENDS: dict[str, BackendKind] = registry(
    [
        SimulatedBackend,
        ReplayBackend,
        LlamaServerBackend,
        OllamaBackend,
        AnthropicBackend,
        OpenAIBackend,
    ]
)


def http_client(entry: BackendSettings) -> httpx.AsyncClient:
    """The client for one backend entry: a keep-alive connection per concurrent run.

    httpx keeps 20 idle connections by default, so at a higher concurrency every extra request
    opened and closed a connection (5 ms of CPU per call at concurrency 32 against a local stub).
    """
    from evalkit.backends._http import pooled_client

    return pooled_client(entry.concurrency, entry.timeout_s)


def needs_http_client(kind: str) -> bool:
    """Whether a kind calls a server (and so takes an `httpx.AsyncClient`); sim and replay do not."""
    return BACKENDS[kind].speaks_http


def key_env(entry: BackendSettings) -> str | None:
    """The variable an entry's key is read from: the one the config names, else its kind's default."""
    return entry.api_key_env or BACKENDS[entry.kind].key_env


def key_required(entry: BackendSettings) -> bool:
    """A key is needed when the config names its variable, or for a hosted API at its default address
    (a local OpenAI-compatible server, llama-server's Messages API or servers evalkit starts need none)."""
    return bool(entry.api_key_env) or (
        BACKENDS[entry.kind].key_env is not None
        and entry.url is None
        and not entry.endpoint_list()
        and entry.serve is None
    )


def create_backend(entry: BackendSettings, client: httpx.AsyncClient | None) -> Backend:
    """Build the backend for a config entry. The API key is read here and kept out of every record.

    `client` may be None only for a kind that needs none (`needs_http_client`)."""
    if entry.endpoint_list():  # several servers: one backend each, balanced by a pool
        if client is None:
            raise ConfigError(f"backend {entry.label!r}: kind {entry.kind!r} takes no endpoint list")
        return _pool(entry, client)
    cls = BACKENDS.get(entry.kind)
    if cls is None:
        raise ConfigError(f"backend {entry.label!r}: unknown kind {entry.kind!r} (known: {', '.join(BACKENDS)})")
    if cls.speaks_http and entry.url is not None:
        from evalkit.backends._http import url_problem

        problem = url_problem(entry.url)
        if problem:
            raise ConfigError(f"backend {entry.label!r}: url {problem}")
    if client is None and cls.speaks_http:
        raise ConfigError(f"backend {entry.label!r}: kind {entry.kind!r} needs an HTTP client")
    kwargs: dict[str, Any] = {"entry": entry, "client": client}
    env_name = key_env(entry)
    if env_name:
        key = os.environ.get(env_name)
        if key_required(entry) and not key:
            why = "" if entry.api_key_env else f" (kind {entry.kind} at its default url needs a key)"
            raise ConfigError(f"backend {entry.label!r}: environment variable {env_name} is not set{why}")
        kwargs["api_key"] = key
    return cls(**kwargs)


def _pool(entry: BackendSettings, client: httpx.AsyncClient) -> Backend:
    """One backend per endpoint of `entry` (sharing the client and its connection pool), balanced."""
    from evalkit.backends.pool import Endpoint, PoolBackend

    endpoints = []
    for settings in entry.endpoint_list():
        single = entry.model_copy(update={"url": settings.url, "urls": None, "endpoints": None})
        endpoints.append(Endpoint(settings.url, create_backend(single, client), settings.concurrency))
    return PoolBackend(entry, endpoints)
