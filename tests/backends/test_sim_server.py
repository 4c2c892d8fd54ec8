"""`evalkit serve sim`: the simulated backend over HTTP meets every run exactly as in process.

The reference is the in-process simulated backend: the same config, profile and seeds run through
`/v1/chat/completions` must give every run the same replies, call by call, and so the same outcomes.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends.anthropic import anthropic_messages
from evalkit.backends.openai import chat_messages
from evalkit.backends.sim_server import SIMULATED_HEADER, SimServer
from evalkit.backends.sim_wire import ScenarioIndex, corrected
from evalkit.chat import Message
from evalkit.report.data import build_report
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import summary_table
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from evalkit.scenario.model import Scenario, load_scenario, load_scenarios
from tests.extras import needs_extra
from tests.fakes import call
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "tests/data/scenarios/e2e_weather.yaml"
# the default families, and two BFCL multi-turn sets whose scenarios share openings (found by later turns)
# BFCL's multi-turn cases: their stateful mocks are classes of bfcl_eval (the bfcl extra)
MULTI_TURN = ["scenarios/bfcl/multi_turn_miss_param/*.yaml", "scenarios/bfcl-wide/multi_turn_miss_func/*.yaml"]
HAS_BFCL = importlib.util.find_spec("bfcl_eval") is not None
SCENARIOS = [
    "scenarios/casual_greeting/*.yaml",
    "scenarios/relevance_detection/*.yaml",
    "scenarios/sequential_reasoning/*.yaml",
    "scenarios/data_gap_recovery/*.yaml",
    *(MULTI_TURN if HAS_BFCL else []),
]
STRATEGIES = """
strategies:
  trust_text: [trust_text]
  retry_nudge: [retry_nudge]
  respond+nudge: [respond_tool, retry_nudge]
  grammar: [respond_tool, {grammar: {mode: grammar}}]
  rescue: [rescue_parse, retry_nudge]
"""


def _config(tmp_path: Path, name: str, backend: str) -> Path:
    globs = ", ".join(json.dumps(str(ROOT / s)) for s in SCENARIOS)
    text = f"""
name: {name}
seed: 7
runs: 2
scenarios: [{globs}]
custom_families: [multi_turn]
modes: [native, prompt]
backends:
  - {backend}
{STRATEGIES}
"""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _replies(path: Path) -> dict[str, tuple[Any, ...]]:
    """Per run: its outcome, and every model reply (text, calls) in order."""
    out = {}
    for run in load_results([path]).runs:
        replies = tuple(
            (
                c.completion.text,
                tuple((t.name, json.dumps(t.arguments), t.raw_arguments) for t in c.completion.tool_calls),
            )
            for c in run.calls
        )
        out[run.run_id] = (run.outcome, run.correct, run.failure, run.retries, run.model_calls, replies)
    return out


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, ...]]:
    tmp = tmp_path_factory.mktemp("inproc")
    config = load_config(_config(tmp, "inproc", "{label: sim, kind: sim, model: small-local, concurrency: 8}"))
    return _replies(run_config(config, tmp / "inproc.jsonl"))


def _malformed(replies: tuple[Any, ...]) -> bool:
    return any(raw is not None for _, calls in replies for _, _, raw in calls)


@pytest.mark.parametrize("kind", ["llama-server", "openai", "anthropic"])
def test_every_run_over_http_equals_the_run_in_process(
    kind: str, in_process: dict[str, tuple[Any, ...]], tmp_path: Path
) -> None:
    scenarios = load_scenarios(sorted(str(p) for s in SCENARIOS for p in ROOT.glob(s)))
    with sim_http(SimServer("small-local", scenarios)) as url:
        base = url + "/v1" if kind == "openai" else url
        entry = f'{{label: sim, kind: {kind}, model: small-local, url: "{base}", concurrency: 8}}'
        over_http = _replies(run_config(load_config(_config(tmp_path, "http", entry)), tmp_path / "http.jsonl"))
    if kind != "llama-server":  # no grammar there: those cells are unsupported, not compared
        assert {v[0] for k, v in over_http.items() if "/grammar/" in k} == {"unsupported"}
        over_http = {k: v for k, v in over_http.items() if "/grammar/" not in k}
    if kind == "anthropic":  # a tool_use `input` is an object: a malformed call cannot travel
        over_http = {k: v for k, v in over_http.items() if not _malformed(in_process[k][5])}
    expected = {k: v for k, v in in_process.items() if k in over_http}
    assert len(expected) >= (300 if HAS_BFCL else 200)  # runs compared (with the multi-turn cases, more)
    differing = [k for k in expected if expected[k] != over_http[k]]
    assert differing == []
    # the comparison is not vacuous: the runs vary, retries happen, some fail
    assert {v[0] for v in expected.values()} >= {"final_answer", "terminal_tool"}
    assert any(v[3] for v in expected.values()) and not all(v[1] for v in expected.values())


# -- the correction rule ----------------------------------------------------------------------------


def _two_turns() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "two",
            "family": "casual_greeting",
            "turns": ["hi", "and the weather?"],
            "tools": [{"name": "get_weather", "parameters": {"type": "object", "properties": {}}}],
            "reference": {"reply": "Hello!"},
            "check": {"reply": {}},
        }
    )


def test_a_correction_is_a_message_the_scenario_did_not_write_or_a_flagged_tool_error() -> None:
    scenario = _two_turns()
    user = Message(role="user", content="hi")
    reply = Message(role="assistant", content="Hello!")
    calling = Message(role="assistant", tool_calls=[call("get_weather")])
    cases = [
        ([user], False),  # a first try
        ([user, reply, Message(role="user", content="and the weather?")], False),  # the scenario's next turn
        ([user, reply, Message(role="user", content="Please call a tool.")], True),  # a guard's nudge
        ([user, calling, Message(role="tool", content='{"temperature_c": 18}')], False),  # a tool result
        ([user, calling, Message(role="tool", content='{"error": "unknown tool"}')], False),  # the mock's own error
        ([user, calling, Message(role="tool", content="[UnknownTool] Tool 'x' does not exist.")], True),  # Forge
        ([user, calling, Message(role="tool", content="[ToolArgValidationError] bad")], True),
        ([user, reply, Message(role="user", content="Result of get_weather: {}")], False),  # prompt-mode result
    ]
    assert [corrected(messages, scenario) for messages, _ in cases] == [want for _, want in cases]
    # with no scenario known, every user message after a reply is a correction
    assert corrected([user, reply, Message(role="user", content="and the weather?")], None)


def test_the_scenario_is_found_from_the_opening_and_the_system_text() -> None:
    weather = load_scenario(WEATHER)
    index = ScenarioIndex([weather, _two_turns()])
    system = Message(role="system", content=weather.system + "\n\nYou can call these tools: ...")
    assert index.find([system, Message(role="user", content="What is the weather in Paris?")], set()) is weather
    assert index.find([Message(role="user", content="What is the weather in Paris?")], set()) is None  # no system
    assert index.find([Message(role="user", content="something else")], set()) is None


# -- the wire ----------------------------------------------------------------------------------------

_TOOLS = [
    {"name": "get_weather", "description": "", "parameters": {"type": "object", "properties": {"city": {}}}},
    {"name": "report", "description": "", "parameters": {"type": "object", "properties": {"text": {}}}},
]


def _conversations(scenario: Scenario) -> list[list[Message]]:
    system = Message(role="system", content=scenario.system)
    user = Message(role="user", content=scenario.user_text(0))
    calling = Message(role="assistant", tool_calls=[call("get_weather", city="Paris").model_copy(update={"id": "c1"})])
    return [
        [system, user],
        [system, user, Message(role="assistant", content="Let me see."), Message(role="user", content="Use a tool.")],
        [system, user, calling, Message(role="tool", content='{"sky": "cloudy"}', tool_call_id="c1")],
    ]


def _parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return "malformed"


def _decision(answer: dict[str, Any], protocol: str) -> tuple[str, list[tuple[str, Any]]]:
    if protocol == "openai":
        message = answer["choices"][0]["message"]
        calls = [(c["function"]["name"], _parsed(c["function"]["arguments"])) for c in message.get("tool_calls") or []]
        return message["content"] or "", calls
    text = "".join(b["text"] for b in answer["content"] if b["type"] == "text")
    return text, [(b["name"], b["input"]) for b in answer["content"] if b["type"] == "tool_use"]


def test_anthropic_messages_answers_as_chat_completions_for_the_same_seed() -> None:
    """The Messages API has no seed field: the X-Evalkit-Seed header carries it (docs/protocols.md)."""
    scenario = load_scenario(WEATHER)
    server = SimServer("small-local", [scenario])
    same, seen = 0, set()
    with sim_http(server) as url, httpx.Client(base_url=url, timeout=10) as client:
        for messages in _conversations(scenario):
            for seed in range(40):
                chat = client.post(
                    "/v1/chat/completions",
                    json={
                        "messages": chat_messages(messages),
                        "tools": [{"type": "function", "function": t} for t in _TOOLS],
                        "seed": seed,
                    },
                ).json()
                system, wire = anthropic_messages(messages)
                anthropic = client.post(
                    "/v1/messages",
                    headers={"X-Evalkit-Seed": str(seed)},
                    json={
                        "system": system,
                        "messages": wire,
                        "max_tokens": 256,
                        "tools": [{**t, "input_schema": t["parameters"]} for t in _TOOLS],
                    },
                ).json()
                a, b = _decision(chat, "openai"), _decision(anthropic, "anthropic")
                seen.add(json.dumps(a))
                # a malformed call has no place in Anthropic's `input`: it goes out empty
                same += a == b or (a[0] == b[0] and a[1][0][1] == "malformed" and b[1] == [(a[1][0][0], {})])
    assert same == 3 * 40
    assert len(seen) > 5  # the seeds draw different behaviours


def test_a_request_is_answered_the_same_every_time_and_says_it_is_simulated() -> None:
    scenario = load_scenario(WEATHER)
    body = {
        "messages": chat_messages(_conversations(scenario)[0]),
        "tools": [{"type": "function", "function": t} for t in _TOOLS],
        "seed": 3,
    }
    fitted = sorted((ROOT / "evalkit/profiles/fitted").glob("*.yaml"))[0]
    with sim_http(SimServer(str(fitted), [scenario])) as url, httpx.Client(base_url=url, timeout=10) as client:
        first, again = client.post("/v1/chat/completions", json=body), client.post("/v1/chat/completions", json=body)
        assert first.json() == again.json()
        answers = [
            first,
            client.get("/health"),
            client.get("/v1/models"),
            client.get("/props"),
            client.post("/v1/chat/completions", content=b"{not json"),
            client.post("/v1/chat/completions", content=b"[" * 100_000 + b"]" * 100_000),  # past the parser's depth
            client.get("/nowhere"),
        ]
        assert [r.status_code for r in answers] == [200, 200, 200, 200, 400, 400, 404]
        assert all(r.headers[SIMULATED_HEADER].startswith("SIMULATED (fitted to ") for r in answers)
        assert client.get("/health").json()["simulated"] is True
        assert client.get("/v1/models").json()["data"][0]["simulated"] is True


def test_runs_through_it_are_labelled_simulated_everywhere(tmp_path: Path) -> None:
    scenario = load_scenario(WEATHER)
    with sim_http(SimServer("small-local", [scenario])) as url:
        path = tmp_path / "c.yaml"
        path.write_text(
            f"name: c\nruns: 3\nscenarios: [{json.dumps(str(WEATHER))}]\n"
            f'backends: [{{label: http, kind: openai, model: small-local, url: "{url}/v1"}}]\n'
            "strategies: {trust_text: [trust_text]}\n",
            encoding="utf-8",
        )
        output = run_config(load_config(path), tmp_path / "c.jsonl")
    results = load_results([output])
    assert results.headers[0].simulated and all(r.simulated for r in results.runs)
    assert results.headers[0].backends["http"]["label"] == "SIMULATED"
    assert "[SIM]" in summary_table(results)
    assert "SIMULATED RESULTS" in render_markdown(build_report(results, include_power=False))
    assert "SIMULATED RESULTS" in _evalkit("report", str(output), "-o", str(tmp_path / "r.html")).stdout + (
        tmp_path / "r.html"
    ).read_text(encoding="utf-8")
    gate = _evalkit("gate", "--baseline", str(output), "--candidate", str(output))
    assert gate.returncode == 0 and "SIMULATED results" in gate.stdout


# -- the command ---------------------------------------------------------------------------------------


def _evalkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, timeout=60)


def test_the_command_serves_until_interrupted(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "serve", "sim", "--port", "0", "--scenarios", str(WEATHER)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "SIMULATED" in first and "1 scenarios known" in first
        url = first.split(" on ", 1)[1].split(";", 1)[0]
        assert httpx.get(url + "/health", timeout=10).json()["simulated"] is True
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "stopped" in out


def test_bad_profile_and_busy_port_are_one_line_errors() -> None:
    bad = _evalkit("serve", "sim", "--model", "no-such-profile")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown simulated profile" in bad.stderr
    with sim_http(SimServer("small-local")) as url:
        busy = _evalkit("serve", "sim", "--port", url.rsplit(":", 1)[1])
    assert busy.returncode == 3 and busy.stderr.count("\n") == 1 and "cannot listen" in busy.stderr


def test_the_comparison_covers_multi_turn_cases() -> None:
    """Without the bfcl extra the comparison above runs the four families only; this says so."""
    if not HAS_BFCL:
        pytest.skip(f"the multi-turn cases were left out: {needs_extra('bfcl')}")
    assert all(pattern in SCENARIOS for pattern in MULTI_TURN)
