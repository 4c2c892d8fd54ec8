"""Faults and unsupported features end to end: real backends on a scripted server, driven by the agent loop
(`run_loop`) and the runner (`execute_run`, `run_config`), with retries that never wait on the clock.

The runner builds its own `httpx.AsyncClient` per backend entry (no client factory to inject a
transport), so the whole-matrix test records a dead llama-server through `execute_run`, the runner's
per-run seam, and then runs the config from that recording with `kind: replay`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from evalkit.backends.anthropic import AnthropicBackend
from evalkit.backends.base import RetryPolicy
from evalkit.backends.llama_server import LlamaServerBackend
from evalkit.backends.ollama import OllamaBackend
from evalkit.backends.recording import RecordingBackend
from evalkit.chat import Sampling
from evalkit.errors import ReplayMiss
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.loop import RunState, run_loop
from evalkit.run.matrix import execute_run, plan_runs
from evalkit.run.preflight import config_scenarios
from evalkit.run.runner import run_config
from evalkit.strategies import build_stack
from tests.backends import WEATHER, WEATHER_DOC, MockServer, Step, arun, entry, payload

CHAT = "POST /v1/chat/completions"
NO_WAIT = RetryPolicy(attempts=3, base_delay_s=0, max_delay_s=0)
BUSY = (503, payload("llama_server", "error_slots_busy"))
TOOL_CALL = (200, payload("llama_server", "chat_tool_call"))
ANSWER = (200, payload("llama_server", "chat_final_answer"))


def llama(server: MockServer, *, api_key: str | None = None) -> LlamaServerBackend:
    return LlamaServerBackend(
        entry=entry("llama-server", model="smollm2", url="http://gpu-box.test:8080"),
        client=server.client(),
        api_key=api_key,
    )


def chat(*steps: Step, props: str = "props") -> MockServer:
    return MockServer(
        {
            "GET /health": [(200, {"status": "ok"})],
            "GET /props": [(200, payload("llama_server", props))],
            CHAT: list(steps),
        }
    )


def run(backend: Any, stack: list[Any] | None = None, mode: str = "native") -> RunState:
    state, _ = arun(
        run_loop(
            WEATHER,
            build_stack(stack or [("trust_text", {})]),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(temperature=0.0, seed=3, max_tokens=64),
            run_id="w/0",
            seed=3,
            policy=NO_WAIT,
        )
    )
    return state


# -- retried faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        BUSY,
        (429, {"error": {"code": 429, "message": "slow down"}}),
        (502, "<html>bad gateway</html>"),
        httpx.ReadTimeout,
        httpx.ConnectError,
        httpx.RemoteProtocolError,
    ],
)
def test_a_transient_fault_is_retried_and_the_run_succeeds(fault: Step) -> None:
    server = chat(fault, TOOL_CALL, ANSWER)
    state = run(llama(server))
    assert state.outcome == "final_answer" and state.error is None and state.reply == "It is 21°C and sunny in Paris."
    assert [c.backend_retries for c in state.calls] == [1, 0]  # the retry is counted, not a guard retry
    assert state.retries == 0 and len(server.hits(CHAT)) == 3


def test_a_backend_that_stays_down_ends_the_run_as_infra_error_after_bounded_attempts() -> None:
    server = chat(BUSY)
    state = run(llama(server))
    assert state.outcome == "infra_error" and state.calls == []
    assert state.error == "HTTP 503 from /v1/chat/completions: no slot available"
    assert len(server.hits(CHAT)) == NO_WAIT.attempts


def test_a_backend_that_dies_mid_run_keeps_the_calls_made_so_far() -> None:
    server = chat(TOOL_CALL, httpx.ConnectError)
    state = run(llama(server))
    assert state.outcome == "infra_error" and "ConnectError" in (state.error or "")
    assert len(state.calls) == 1 and state.calls[0].decision == "execute"
    assert len(server.hits(CHAT)) == 1 + NO_WAIT.attempts


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_4xx_is_not_retried(status: int) -> None:
    server = chat((status, {"error": {"code": status, "message": "bad request"}}))
    state = run(llama(server))
    assert state.outcome == "infra_error" and len(server.hits(CHAT)) == 1


# -- unsupported before any request -------------------------------------------------------------------


def test_tool_choice_on_ollama_is_unsupported_without_a_request() -> None:
    server = MockServer({})
    ollama = OllamaBackend(
        entry=entry("ollama", model="llama3.2", url="http://ollama.test:11434"), client=server.client()
    )
    state = run(ollama, [("tool_choice", {})])
    assert state.outcome == "unsupported" and "tool_choice_required" in (state.error or "")
    assert server.requests == []


def test_a_grammar_on_anthropic_is_unsupported_without_a_request() -> None:
    server = MockServer({})
    anthropic = AnthropicBackend(entry=entry("anthropic", model="claude"), client=server.client(), api_key="k")
    state = run(anthropic, [("grammar", {"mode": "grammar"})], mode="prompt")
    assert state.outcome == "unsupported" and "grammar" in (state.error or "") and server.requests == []


def test_a_hybrid_grammar_on_anthropic_runs_unconstrained_and_says_so() -> None:
    reply = payload("anthropic", "text") | {"content": [{"type": "text", "text": "It is 21C."}]}
    server = MockServer({"POST /v1/messages": [(200, reply)]})
    anthropic = AnthropicBackend(entry=entry("anthropic", model="claude"), client=server.client(), api_key="k")
    state = run(anthropic, [("grammar", {"mode": "hybrid"})], mode="prompt")
    assert state.outcome == "final_answer" and state.calls[0].completion.constraint_dropped
    assert [(i.strategy, i.action) for i in state.interventions] == [("grammar", "judge")]


def test_native_tools_on_a_template_without_tool_support_are_unsupported() -> None:
    server = chat(TOOL_CALL, props="props_no_tools")
    backend = llama(server)
    arun(backend.describe())
    state = run(backend)
    assert state.outcome == "unsupported" and "native_tools" in (state.error or "") and not server.hits(CHAT)


def test_a_grammar_in_native_mode_on_llama_server_is_unsupported() -> None:
    server = chat(TOOL_CALL)
    state = run(llama(server), [("grammar", {"mode": "grammar"})])
    assert state.outcome == "unsupported" and "grammar_with_tools" in (state.error or "") and not server.hits(CHAT)


# -- through the runner ---------------------------------------------------------------------------------


KEY = "sk-llama-secret-0042"


def config(tmp_path: Path, recording: Path, nudge: dict[str, Any] | None = None) -> RunConfig:
    scenario = tmp_path / "scenarios" / "weather.yaml"
    scenario.parent.mkdir(parents=True, exist_ok=True)
    scenario.write_text(yaml.safe_dump(WEATHER_DOC), encoding="utf-8")
    return RunConfig.model_validate(
        {
            "name": "dead-server",
            "seed": 11,
            "runs": 2,
            "scenarios": [str(scenario)],
            "backends": [
                {
                    "label": "smollm2",
                    "kind": "replay",
                    "model": "smollm2",
                    "options": {"dir": str(recording)},
                    "retry": {"attempts": 3, "base_delay_s": 0, "max_delay_s": 0},
                }
            ],
            "strategies": {"trust_text": ["trust_text"], "nudge": [{"retry_nudge": nudge or {}}]},
        }
    )


def test_a_dead_server_is_infra_error_through_the_runner_and_the_results_file_stays_intact(tmp_path: Path) -> None:
    recording = tmp_path / "recordings" / "smollm2"
    cfg = config(tmp_path, recording)
    # the server answers every chat request with a 503 whose body echoes the key, as a buggy proxy might
    busy = (503, {"error": {"code": 503, "message": f"no slot available (key {KEY})"}})
    server = chat(busy)
    recorder = RecordingBackend(llama(server, api_key=KEY), recording)
    arun(recorder.describe())
    specs = plan_runs(cfg, config_scenarios(cfg))
    live = [arun(execute_run(spec, recorder, cfg)) for spec in specs]
    assert len(live) == 4 and {r.outcome for r in live} == {"infra_error"}
    assert not any(r.completed or r.correct or r.counted for r in live)
    assert all(r.error == "HTTP 503 from /v1/chat/completions: no slot available (key [redacted])" for r in live)
    assert len(server.hits(CHAT)) == 4 * 3 and all(
        r.headers["authorization"] == f"Bearer {KEY}" for r in server.hits(CHAT)
    )

    out = run_config(cfg, tmp_path / "results.jsonl")
    raw = out.read_text(encoding="utf-8")
    records = [json.loads(line) for line in raw.splitlines()]
    assert [r["type"] for r in records] == ["header", "run", "run", "run", "run", "footer"]
    assert records[-1]["status"] == "infra_errors" and records[-1]["runs_written"] == 4
    assert records[-1]["reason"].endswith("no slot available (key [redacted]))")  # the first error, blanked
    results = load_results([out])
    assert sorted(r.run_id for r in results.runs) == sorted(s.run_id for s in specs)
    assert {r.outcome for r in results.runs} == {"infra_error"}
    assert [r.error for r in sorted(results.runs, key=lambda r: r.run_id)] == [
        r.error for r in sorted(live, key=lambda r: r.run_id)
    ]
    assert results.headers[0].backends["smollm2"]["build_info"] == "b6123-79c1160b"
    assert KEY not in raw and KEY not in "".join(p.read_text() for p in recording.iterdir())


def test_replaying_a_matrix_whose_nudge_changed_stops_with_a_miss_and_a_readable_file(tmp_path: Path) -> None:
    recording = tmp_path / "recordings" / "smollm2"
    recorded = config(tmp_path, recording)
    recorder = RecordingBackend(llama(chat((200, payload("llama_server", "chat_text")))), recording)
    arun(recorder.describe())
    for spec in plan_runs(recorded, config_scenarios(recorded)):
        arun(execute_run(spec, recorder, recorded))
    assert {r.outcome for r in load_results([run_config(recorded, tmp_path / "same.jsonl")]).runs} == {"final_answer"}

    changed = config(tmp_path, recording, nudge={"message": "You must call get_weather."})
    out = tmp_path / "changed.jsonl"
    with pytest.raises(ReplayMiss, match=r"call 1: the request changed since recording: messages\[3\]\.content"):
        run_config(changed, out)
    results = load_results([out])  # header, whatever finished, and a footer: nothing half-written
    assert results.footers[0].status == "interrupted" and results.footers[0].runs_written == len(results.runs)
    assert all(r.cell.strategy == "trust_text" for r in results.runs)
