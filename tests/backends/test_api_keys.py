"""API keys: read from the variable `api_key_env` names (by `create_backend`), sent in each API's header,
and never found in `describe()`, a recording, an error text or a results file, even when a server echoes it.

`create_backend` reads `os.environ` itself, so the tests set that one variable with `monkeypatch.setenv`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit import __version__
from evalkit.backends import create_backend
from evalkit.backends.base import RetryPolicy
from evalkit.backends.recording import RecordingBackend
from evalkit.chat import Sampling
from evalkit.errors import BackendError, ConfigError
from evalkit.results.records import Header, RunRecord
from evalkit.results.writer import ResultsWriter
from evalkit.run.loop import run_loop
from evalkit.strategies import build_stack
from tests.backends import CONTEXT, WEATHER, MockServer, arun, entry, payload, request

KEY = "sk-evalkit-test-5f3a9c1e"
ENV = "EVALKIT_BACKEND_TEST_KEY"


def echo(status: int) -> tuple[int, dict[str, Any]]:
    """An error body that repeats the key, as some proxies and older servers do."""
    return status, {"error": {"code": status, "message": f"key {KEY} is not allowed here"}}


# kind -> (url, the routes describe() reads, the chat route, the header and its value)
KINDS: dict[str, tuple[str | None, dict[str, Any], str, str, str]] = {
    "anthropic": (None, {}, "POST /v1/messages", "x-api-key", KEY),
    "openai": (
        None,
        {"GET /v1/models": [(200, payload("openai", "models"))]},
        "POST /v1/chat/completions",
        "authorization",
        f"Bearer {KEY}",
    ),
    "llama-server": (
        "http://gpu-box.test:8080",
        {"GET /health": [(200, {"status": "ok"})], "GET /props": [(200, payload("llama_server", "props"))]},
        "POST /v1/chat/completions",
        "authorization",
        f"Bearer {KEY}",
    ),
    "ollama": (
        "http://ollama.test:11434",
        {"POST /api/show": [(200, payload("ollama", "show"))], "GET /api/tags": [(200, payload("ollama", "tags"))]},
        "POST /api/chat",
        "authorization",
        f"Bearer {KEY}",
    ),
}
ANSWERS = {
    "anthropic": payload("anthropic", "text"),
    "openai": payload("openai", "text"),
    "llama-server": payload("llama_server", "chat_text"),
    "ollama": payload("ollama", "chat_text"),
}


def build(kind: str, server: MockServer, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(ENV, KEY)
    url = KINDS[kind][0]
    return create_backend(
        entry(kind, model="gpt-4o-mini" if kind == "openai" else "llama3.2", url=url, api_key_env=ENV), server.client()
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_key_is_sent_in_the_apis_header_on_every_request(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _, describe_routes, chat_route, header, value = KINDS[kind]
    server = MockServer({**describe_routes, chat_route: [(200, ANSWERS[kind])]})
    backend = build(kind, server, monkeypatch)
    arun(backend.describe())
    arun(backend.complete(request(), CONTEXT))
    assert server.requests and all(r.headers[header] == value for r in server.requests)
    other = "authorization" if header == "x-api-key" else "x-api-key"
    assert all(other not in r.headers for r in server.requests)
    assert all(KEY not in r.content.decode() and KEY not in str(r.url) for r in server.requests)


@pytest.mark.parametrize("kind", KINDS)
def test_the_key_is_in_no_description_error_recording_or_results_file(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, describe_routes, chat_route, _, _ = KINDS[kind]
    server = MockServer({**describe_routes, chat_route: [echo(503), echo(401)]})
    recorder = RecordingBackend(build(kind, server, monkeypatch), tmp_path / "rec")
    described = arun(recorder.describe())
    assert KEY not in json.dumps(described)
    state, view = arun(
        run_loop(
            WEATHER,
            build_stack([("trust_text", {})]),
            recorder,
            mode="native",
            sampling=Sampling(seed=1),
            run_id="k/0",
            seed=1,
            policy=RetryPolicy(attempts=3, base_delay_s=0, max_delay_s=0),
        )
    )
    assert state.outcome == "infra_error" and "[redacted]" in (state.error or "")
    assert len(server.hits(chat_route)) == 2  # the 503 was retried, the 401 was not

    results = tmp_path / "results.jsonl"
    writer = ResultsWriter(results)
    writer.write(
        Header(
            evalkit_version=__version__,
            git_sha=None,
            started_at="t",
            config_name="keys",
            config_hash="0",
            config={"api_key_env": ENV},
            seed=1,
            runs_per_cell=1,
            simulated=False,
            backends={"b": described},
        )
    )
    writer.write(
        RunRecord.model_validate(
            {
                "run_id": "k/0",
                "cell": {
                    "backend": "b",
                    "model": "m",
                    "mode": "native",
                    "strategy": "trust_text",
                    "scenario": WEATHER.id,
                    "family": WEATHER.family,
                },
                "index": 0,
                "seed": 1,
                "simulated": False,
                "outcome": state.outcome,
                "completed": False,
                "correct": False,
                "failure": None,
                "first_try": False,
                "retries": 0,
                "guard_fires": 0,
                "model_calls": 0,
                "iterations": 0,
                "ideal_iterations": 1,
                "wasted_calls": 0,
                "usage": state.usage.model_dump(),
                "latency_s": 0.0,
                "wall_s": 0.0,
                "sampling": {"seed": 1},
                "error": state.error,
                "messages": [m.model_dump() for m in view.messages],
            }
        )
    )
    writer.close()
    written = [results, *sorted((tmp_path / "rec").iterdir())]
    assert [p.name for p in written] == ["results.jsonl", "provenance.json", "recordings.jsonl"]
    for path in written:
        assert KEY not in path.read_text(encoding="utf-8"), path.name
    assert ENV in results.read_text()  # the variable's name may be recorded, its value never


def test_a_named_variable_that_is_not_set_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="EVALKIT_BACKEND_TEST_UNSET_VARIABLE is not set"):
        create_backend(entry("anthropic", api_key_env="EVALKIT_BACKEND_TEST_UNSET_VARIABLE"), httpx.AsyncClient())


def test_anthropic_falls_back_to_its_default_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server = MockServer({"POST /v1/messages": [(200, ANSWERS["anthropic"])]})
    backend = create_backend(entry("anthropic"), server.client())
    arun(backend.complete(request(), CONTEXT))
    assert server.requests[0].headers["x-api-key"] == KEY


def test_an_error_that_echoes_the_key_is_redacted_at_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    server = MockServer({"POST /v1/messages": [echo(401)]})
    with pytest.raises(BackendError) as info:
        arun(build("anthropic", server, monkeypatch).complete(request(), CONTEXT))
    assert str(info.value) == "HTTP 401 from /v1/messages: key [redacted] is not allowed here"
