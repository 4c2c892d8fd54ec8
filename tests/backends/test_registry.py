"""One list of backend kinds, read from the classes (`evalkit.backends.BACKENDS`).

Before, a kind lived in three lists in two files (the registry, the HTTP kinds, the default key
variables), and a kind left out of the HTTP list was built with no client and no url check, without
an error. Now a class declares `kind`, `speaks_http` and `key_env`; a class that misses one, or
repeats a kind, fails `registry()` when `evalkit.backends` is imported, and a backend class that is
not registered fails the collection of this module (so every test run)."""

from __future__ import annotations

from typing import ClassVar

import httpx
import pytest

import evalkit.backends
from evalkit.backends import BACKENDS, create_backend, key_env, key_required, needs_http_client, registry
from evalkit.backends.entry import BackendEntry
from evalkit.backends.http_backend import HttpBackend
from evalkit.errors import ConfigError
from tests.registry_check import declared, unregistered

_UNREGISTERED = unregistered(evalkit.backends, "kind", BACKENDS)
if _UNREGISTERED:  # fails the collection: a kind no config could name is a mistake, not one failed test
    raise ImportError(f"backend classes not in evalkit.backends.BACKENDS: {', '.join(_UNREGISTERED)}")


def test_every_kind_is_registered_once_by_its_own_class() -> None:
    assert _UNREGISTERED == []
    assert set(declared(evalkit.backends, "kind")) == set(BACKENDS)
    assert all(cls.kind == kind for kind, cls in BACKENDS.items())


def test_what_the_runner_asks_of_a_kind_is_read_from_its_class() -> None:
    http = {kind for kind, cls in BACKENDS.items() if cls.speaks_http}
    assert http == {"llama-server", "ollama", "anthropic", "openai"}
    assert all(needs_http_client(kind) == (kind in http) for kind in BACKENDS)
    assert {kind: cls.key_env for kind, cls in BACKENDS.items() if cls.key_env} == {
        "anthropic": "ANTHROPIC_API_KEY",
        "openai": "OPENAI_API_KEY",
    }


class _NoHttpDeclared:
    kind: ClassVar[str] = "half"
    key_env: ClassVar[str | None] = None


class _Twin:
    kind: ClassVar[str] = "sim"
    speaks_http: ClassVar[bool] = False
    key_env: ClassVar[str | None] = None


def test_a_half_declared_or_repeated_kind_is_refused() -> None:
    """The case the three lists allowed: a kind nobody said was HTTP. Now it is no kind at all."""
    with pytest.raises(TypeError, match=r"_NoHttpDeclared does not declare speaks_http"):
        registry([_NoHttpDeclared])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"backend kind 'sim' is declared by .*SimulatedBackend and .*_Twin"):
        registry([*BACKENDS.values(), _Twin])  # type: ignore[list-item]


def test_an_http_kind_is_built_with_its_client_and_its_url_checked() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(500)))
    entry = BackendEntry(label="l", kind="llama-server", model="m", url="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="needs an HTTP client"):
        create_backend(entry, None)
    assert isinstance(create_backend(entry, client), HttpBackend)
    bad = BackendEntry.model_construct(**{**entry.model_dump(), "url": "ftp://x"})
    with pytest.raises(ConfigError, match="needs an http:// or https:// scheme"):
        create_backend(bad, client)


def test_the_key_variable_is_the_configs_or_the_kinds() -> None:
    hosted = BackendEntry(label="a", kind="anthropic", model="m")
    local = BackendEntry(label="a", kind="anthropic", model="m", url="http://127.0.0.1:8080")
    named = BackendEntry(label="o", kind="ollama", model="m", api_key_env="PROXY_KEY")
    assert (key_env(hosted), key_required(hosted)) == ("ANTHROPIC_API_KEY", True)
    assert (key_env(local), key_required(local)) == ("ANTHROPIC_API_KEY", False)
    assert (key_env(named), key_required(named)) == ("PROXY_KEY", True)
    assert key_env(BackendEntry(label="s", kind="sim", model="small-local")) is None
