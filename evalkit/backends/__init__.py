"""Backends: a registry of kinds, and building one from a config entry.

Each real backend gets one `httpx.AsyncClient` injected, so tests pass an `httpx.MockTransport`
and nothing in the default test run touches the network.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from evalkit.backends.base import Backend, Feature, RetryPolicy, call_with_retries
from evalkit.errors import ConfigError

if TYPE_CHECKING:
    import httpx

    from evalkit.config import BackendEntry

__all__ = ["BACKENDS", "Backend", "Feature", "RetryPolicy", "call_with_retries", "create_backend"]

# kind -> "module:Class". Every class takes keyword arguments (entry=..., client=..., api_key=...).
BACKENDS: dict[str, str] = {
    "sim": "evalkit.backends.sim:SimulatedBackend",
    "replay": "evalkit.backends.replay:ReplayBackend",
    "llama-server": "evalkit.backends.llama_server:LlamaServerBackend",
    "ollama": "evalkit.backends.ollama:OllamaBackend",
    "anthropic": "evalkit.backends.anthropic:AnthropicBackend",
    "openai": "evalkit.backends.openai:OpenAIBackend",
}

# where a kind reads its key when the config names no variable
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def create_backend(entry: BackendEntry, client: httpx.AsyncClient) -> Backend:
    """Build the backend for a config entry. The API key is read here and kept out of every record."""
    from evalkit.strategies import load_class

    if entry.endpoint_list():  # several servers: one backend each, balanced by a pool
        from evalkit.backends.pool import create_pool

        return create_pool(entry, client)
    target = BACKENDS.get(entry.kind)
    if target is None:
        raise ConfigError(f"backend {entry.label!r}: unknown kind {entry.kind!r} (known: {', '.join(BACKENDS)})")
    env_name = entry.api_key_env or DEFAULT_KEY_ENV.get(entry.kind)
    kwargs: dict[str, Any] = {"entry": entry, "client": client}
    if env_name:
        key = os.environ.get(env_name)
        if entry.api_key_env and not key:
            raise ConfigError(f"backend {entry.label!r}: environment variable {env_name} is not set")
        kwargs["api_key"] = key
    backend: Backend = load_class(target)(**kwargs)
    return backend
