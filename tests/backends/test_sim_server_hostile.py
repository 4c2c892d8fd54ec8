"""`evalkit serve sim` under hostile clients (issue 36, items 4 to 6), and the cases that already held.

Memory is measured in a child process: tracemalloc's count of live Python memory after the hostile
requests, with the garbage collector off (a refused body must be freed at once, not by a later GC) and
generous bounds. "Never hangs" is a generous watchdog, not a speed measurement.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends.sim_server import SimServer
from evalkit.backends.sim_wire import ScenarioIndex, openai_call
from evalkit.scenario.model import load_scenario
from tests.sim_http import sim_http
from tests.strategies.test_parser_properties import bounded

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "tests/data/scenarios/e2e_weather.yaml"
CHAT, MESSAGES = "/v1/chat/completions", "/v1/messages"
MB = 1 << 20


def _child(script: str) -> dict[str, Any]:
    """Run `script` in a fresh interpreter at the repository's root; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


_MEASURE = """
import gc, gzip, json, tracemalloc, httpx
from evalkit.backends.sim_server import SimServer
from evalkit.scenario.model import load_scenario
from tests.sim_http import sim_http
server = SimServer("small-local", [load_scenario("tests/data/scenarios/e2e_weather.yaml")])
with sim_http(server) as url, httpx.Client(base_url=url, timeout=120) as client:
    client.get("/health")
    gc.collect(); gc.disable(); tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    statuses = [r.status_code for r in (%s)]
    after = tracemalloc.get_traced_memory()[0]
    print(json.dumps({"statuses": statuses, "growth": after - before, "peak": tracemalloc.get_traced_memory()[1]}))
"""


def test_bodies_refused_as_too_large_are_freed_at_once() -> None:
    """Three 200 KB gzip posts kept 773 MB until a GC: the inflated body stayed alive in the traceback."""
    posts = "client.post('/v1/chat/completions', content=bomb, headers={'Content-Encoding': 'gzip'}) for _ in range(3)"
    script = _MEASURE.replace("with sim_http", "bomb = gzip.compress(b' ' * (200 << 20), 9)\nwith sim_http") % posts
    measured = _child(script)
    assert measured["statuses"] == [413, 413, 413]
    assert measured["growth"] < 16 * MB  # nothing kept (it was 3 x 64 MB and more)
    assert measured["peak"] < 160 * MB  # refused while inflating: never the whole 200 MB


def test_unknown_openings_are_remembered_as_bounded_hashes() -> None:
    """Every unknown opening was kept whole: +152 MB for 150 x 1 MB."""
    posts = (
        "client.post('/v1/chat/completions',"
        " json={'messages': [{'role': 'user', 'content': str(i) + 'x' * (1 << 20)}]}) for i in range(40)"
    )
    measured = _child((_MEASURE % posts).replace("    after =", "    gc.collect()\n    after ="))
    assert measured["statuses"] == [200] * 40
    assert measured["growth"] < 8 * MB  # it was 40 MB and more


def test_the_unknown_openings_cache_is_bounded_by_count() -> None:
    server = SimServer("small-local", [load_scenario(WEATHER)])
    for i in range(5000):
        server._warn_unknown(openai_call({"messages": [{"role": "user", "content": f"q{i}"}]}, {}, server.index))
    assert 0 < server.unknown_openings() <= 1024


# -- time ------------------------------------------------------------------------------------------


def _prompt_system(line: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "You can call these tools:\n" + line},
            {"role": "user", "content": "hi"},
        ]
    }


def test_prompt_mode_tool_lines_are_read_in_linear_time() -> None:
    """The tool-line regex backtracked: a 382 KB system text blocked the server 4-8 s, 1 MB for minutes."""
    separator = " Parameters (JSON schema): {"
    hostile = "- a: " + separator * 40_000 + "x"  # ~1 MB, no closing brace: the old regex rescanned it per separator
    with bounded(20):
        call = openai_call(_prompt_system(hostile), {}, ScenarioIndex())
    assert call.context.mode == "native" and call.context.offered_tools == []
    good = '- get_weather: Weather. Parameters (JSON schema): {"type": "object", "properties": {}}'
    with bounded(20):
        call = openai_call(_prompt_system(good + separator * 40_000 + "}"), {}, ScenarioIndex())
    assert [t.name for t in call.context.offered_tools] == ["get_weather"]


def _post_raw(port: int, head: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sock.sendall(head)
    return sock


def test_a_body_that_never_arrives_is_answered_408_json() -> None:
    server = SimServer("small-local")
    server.limits = dataclasses.replace(server.limits, body_timeout_s=0.5)
    with sim_http(server) as url:
        port = int(url.rsplit(":", 1)[1])
        sock = _post_raw(port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        answer = sock.recv(65536).decode()
        sock.close()
    assert answer.startswith("HTTP/1.1 408") and "application/json" in answer
    assert json.loads(answer.split("\r\n\r\n", 1)[1])["error"]["type"] == "invalid_request_error"


def test_a_client_that_sends_no_whole_request_is_disconnected_at_the_idle_timeout() -> None:
    server = SimServer("small-local")
    server.gate.idle_timeout_s = 0.5
    with sim_http(server) as url:
        port = int(url.rsplit(":", 1)[1])
        silent = socket.create_connection(("127.0.0.1", port), timeout=60)
        slow = _post_raw(port, b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-")  # headers cut short
        closed = [silent.recv(100), slow.recv(100)]  # b"": the server closed them (a 60 s watchdog)
        silent.close()
        slow.close()
    assert closed == [b"", b""]


def _serve(*args: str, nofile: int | None = None) -> tuple[subprocess.Popen[str], str]:
    def limit() -> None:
        if nofile is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "serve", "sim", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=limit,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    return proc, first.split(" on ", 1)[1].split(";", 1)[0]


def test_idle_connections_cannot_exhaust_the_servers_file_descriptors() -> None:
    """20,000 idle connections exhausted the descriptors and new clients timed out; here 600 against 256."""
    proc, url = _serve(nofile=256)
    port = int(url.rsplit(":", 1)[1])
    idle = []
    try:
        for _ in range(600):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=60))
        answer = httpx.post(url + CHAT, json={"messages": [{"role": "user", "content": "hi"}]}, timeout=30)
        assert answer.status_code == 200
    finally:
        for sock in idle:
            sock.close()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_sigterm_stops_the_server_while_it_inflates_bodies() -> None:
    """SIGTERM arriving while a gzip body was inflated was swallowed: the server kept serving."""
    proc, url = _serve()
    bomb = gzip.compress(b" " * (200 * MB), 9)
    answered = threading.Event()
    stop = threading.Event()

    def flood() -> None:
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                try:
                    client.post(url + CHAT, content=bomb, headers={"Content-Encoding": "gzip"})
                except httpx.HTTPError:
                    return
                answered.set()

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        assert answered.wait(60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        stop.set()
        proc.kill()
    assert proc.returncode == 0 and "stopped" in out and "Traceback" not in err


# -- errors ------------------------------------------------------------------------------------------


def _openai_error(answer: httpx.Response) -> dict[str, Any]:
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and isinstance(error["message"], str)
    return dict(error)


def _anthropic_error(answer: httpx.Response) -> dict[str, Any]:
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    body = answer.json()
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    return dict(body["error"])


WRONG_TYPED = {
    "messages: 5": {"messages": 5},
    "messages: [5]": {"messages": [5]},
    "role: 5": {"messages": [{"role": 5, "content": "hi"}]},
    "content: 5": {"messages": [{"role": "user", "content": 5}]},
    "tools: 5": {"messages": [{"role": "user", "content": "hi"}], "tools": 5},
    "tool function: 5": {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": 5}],
    },
    "properties a: 5": {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a": 5}}}}],
    },
    "properties: []": {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": []}}}],
    },
    "tool_call_id: 5": {"messages": [{"role": "tool", "content": "x", "tool_call_id": 5}]},
    "tool_calls: 5": {"messages": [{"role": "assistant", "content": "x", "tool_calls": 5}]},
    "seed: huge": {"messages": [{"role": "user", "content": "hi"}], "seed": 10**30},
    "max_tokens: 'x'": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": "x"},
    "response_format json_schema: 5": {  # found by test_sim_server_fuzz.py
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {"type": "json_schema", "json_schema": 5},
    },
}


@pytest.mark.parametrize("body", WRONG_TYPED.values(), ids=WRONG_TYPED.keys())
def test_wrong_typed_fields_are_400_json_without_a_traceback(
    body: dict[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    """11 wrong-typed fields got 500 text/plain with the traceback on the server's stderr."""
    with sim_http(SimServer("small-local", [load_scenario(WEATHER)])) as url, httpx.Client(base_url=url) as client:
        answer = client.post(CHAT, json=body)
    assert answer.status_code == 400 and _openai_error(answer)["type"] == "invalid_request_error"
    assert "Traceback" not in capfd.readouterr().err


ANTHROPIC_WRONG = {
    "messages: 5": {"messages": 5, "max_tokens": 16},
    "content: 5": {"messages": [{"role": "user", "content": 5}], "max_tokens": 16},
    "block: 5": {"messages": [{"role": "user", "content": [5]}], "max_tokens": 16},
    "system: 5": {"system": 5, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 16},
    "tools: 5": {"messages": [{"role": "user", "content": "hi"}], "tools": 5, "max_tokens": 16},
    "input_schema properties a: 5": {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": "f", "input_schema": {"type": "object", "properties": {"a": 5}}}],
        "max_tokens": 16,
    },
    "tool_choice: 5": {"messages": [{"role": "user", "content": "hi"}], "tool_choice": 5, "max_tokens": 16},
}


@pytest.mark.parametrize("body", ANTHROPIC_WRONG.values(), ids=ANTHROPIC_WRONG.keys())
def test_wrong_typed_anthropic_fields_are_400_in_anthropics_shape(
    body: dict[str, Any], capfd: pytest.CaptureFixture[str]
) -> None:
    with sim_http(SimServer("small-local", [load_scenario(WEATHER)])) as url, httpx.Client(base_url=url) as client:
        answer = client.post(MESSAGES, json=body)
    assert answer.status_code == 400 and _anthropic_error(answer)["type"] == "invalid_request_error"
    assert "Traceback" not in capfd.readouterr().err


def test_every_layers_error_is_json_in_the_protocols_shape(capfd: pytest.CaptureFixture[str]) -> None:
    hi = {"messages": [{"role": "user", "content": "hi"}]}
    big = gzip.compress(b" " * (100 * MB))
    with sim_http(SimServer("small-local")) as url, httpx.Client(base_url=url, timeout=60) as client:
        openai = {
            404: client.get("/nowhere"),
            405: client.get(CHAT),
            413: client.post(CHAT, content=big, headers={"Content-Encoding": "gzip"}),
        }
        raw = [  # past 16 MB as sent: said by Content-Length, or found while a chunked body arrives
            client.post(CHAT, content=b" " * (17 * MB)),
            client.post(CHAT, content=iter([b" " * MB] * 17)),
        ]
        seed = client.post(CHAT, json=hi, headers={"X-Evalkit-Seed": "9" * 5000})
        anthropic = {
            404: client.get("/v1/messages/nowhere"),
            405: client.get(MESSAGES),
            413: client.post(MESSAGES, content=big, headers={"Content-Encoding": "gzip"}),
            400: client.post(MESSAGES, content=b"{not json"),
        }
        superscript = "\u00b2".encode("latin-1")  # isdigit() says yes, int() says no
        superscript_seed = client.post(MESSAGES, json={**hi, "max_tokens": 9}, headers={"X-Evalkit-Seed": superscript})
    assert {status: answer.status_code for status, answer in openai.items()} == {404: 404, 405: 405, 413: 413}
    assert all(_openai_error(answer) for answer in openai.values())
    assert seed.status_code == 400 and _openai_error(seed)["param"] == "X-Evalkit-Seed"
    assert [r.status_code for r in raw] == [413, 413] and all(_openai_error(r) for r in raw)
    assert {status: answer.status_code for status, answer in anthropic.items()} == {s: s for s in anthropic}
    assert [_anthropic_error(a)["type"] for a in anthropic.values()] == [
        "not_found_error",
        "invalid_request_error",
        "request_too_large",
        "invalid_request_error",
    ]
    assert superscript_seed.status_code == 400 and _anthropic_error(superscript_seed)["type"] == "invalid_request_error"
    assert "Traceback" not in capfd.readouterr().err


def test_an_empty_host_is_refused_in_one_line() -> None:
    """`--host ''` listened on every interface."""
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "serve", "sim", "--host", ""], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--host" in done.stderr


# -- what held (kept) -------------------------------------------------------------------------------


def test_the_server_binds_loopback_by_default() -> None:
    proc, url = _serve()
    try:
        assert url.startswith("http://127.0.0.1:")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_bad_json_deep_nesting_and_non_utf8_are_400_json() -> None:
    with sim_http(SimServer("small-local")) as url, httpx.Client(base_url=url, timeout=30) as client:
        answers = [
            client.post(CHAT, content=b"{not json"),
            client.post(CHAT, content=b"[" * 100_000 + b"]" * 100_000),
            client.post(CHAT, content=b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}'),
        ]
        # any model name is answered by the one simulated profile (agents and proxies name their own)
        other = client.post(CHAT, json={"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]})
    assert [a.status_code for a in answers] == [400, 400, 400]
    assert all(_openai_error(a)["type"] == "invalid_request_error" for a in answers)
    assert other.status_code == 200 and other.headers["X-Evalkit-Simulated"] == "SIMULATED"


def test_two_hundred_concurrent_clients_are_all_served() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "seed": 1}
    statuses: list[int] = []

    def post(url: str) -> None:
        statuses.append(httpx.post(url + CHAT, json=body, timeout=120).status_code)

    with sim_http(SimServer("small-local")) as url:
        threads = [threading.Thread(target=post, args=(url,)) for _ in range(200)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert statuses == [200] * 200


@pytest.mark.parametrize("temperature", ["NaN", "Infinity", "-0.5", "2.5"])
def test_a_temperature_outside_the_apis_range_is_400_naming_it(temperature: str) -> None:
    # OpenAI takes 0 to 2, Anthropic 0 to 1; JSON has no NaN, but Python's reader accepts the token
    body = '{"messages": [{"role": "user", "content": "hi"}], "temperature": ' + temperature + "}"
    with sim_http(SimServer("small-local")) as url, httpx.Client(base_url=url) as client:
        answer = client.post(CHAT, content=body, headers={"Content-Type": "application/json"})
        anthropic = client.post(
            MESSAGES,
            content=body[:-1] + ', "max_tokens": 16}',
            headers={"Content-Type": "application/json"},
        )
        hi = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}
        over_one = client.post(MESSAGES, json={**hi, "temperature": 1.5})
    assert answer.status_code == 400 and "temperature" in _openai_error(answer)["message"]
    assert anthropic.status_code == 400 and "temperature" in _anthropic_error(anthropic)["message"]
    assert over_one.status_code == 400 and "temperature" in _anthropic_error(over_one)["message"]
