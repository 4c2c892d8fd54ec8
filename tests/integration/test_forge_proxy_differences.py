"""Where Forge's proxy differs from evalkit's copies of its guards (docs/guards.md, "Forge's proxy
beside evalkit's copies"), held against the real proxy (`python -m forge.proxy`, every release
installed under .forge/) in front of a scripted upstream that records what the proxy asked.

Skips without a Forge venv (bash scripts/install-forge.sh [VERSION])."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.strategies.retry_nudge import DEFAULT_NUDGE

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = sorted(p.parent.parent.name for p in (ROOT / ".forge").glob("*/bin/python"))
FORGE_NUDGE = (
    "Your previous response was not a valid tool call. You must respond with a tool call, not free text. "
    "Please try again with a valid tool call."
)
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]  # fmt: skip
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS}


def _text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _call(name: str, arguments: str) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class _Upstream(BaseHTTPRequestHandler):
    """Answers chat completions from a script of assistant messages (the last one repeats) and keeps
    each request body; /props, /health and /v1/models as llama-server answers them."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: Any = self.server
        server.requests.append(body)
        message = server.script[min(len(server.requests), len(server.script)) - 1]
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        self._json({"id": "x", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})  # fmt: skip

    def do_GET(self) -> None:
        if self.path.startswith("/props"):
            self._json({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1})
        elif self.path.startswith("/v1/models"):
            self._json({"object": "list", "data": [{"id": "m", "object": "model"}]})
        else:
            self._json({"status": "ok"})

    def _json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _proxy(version: str, script: list[dict[str, Any]], *flags: str) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Forge's proxy of `version` in front of an upstream that answers `script`: (its URL, the requests
    the upstream got)."""
    upstream: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    upstream.script, upstream.requests = script, []
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    port = _free_port()
    python = ROOT / ".forge" / version / "bin" / "python"
    words = [str(python), "-m", "forge.proxy", "--backend-url", f"http://127.0.0.1:{upstream.server_port}",
             "--backend", "llamaserver", "--port", str(port), *flags]  # fmt: skip
    proc = subprocess.Popen(words, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail(f"forge {version} proxy never ready")
        yield url, upstream.requests
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        upstream.shutdown()
        upstream.server_close()


def _ask(url: str) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", json=REQUEST, timeout=60)


pytestmark = pytest.mark.skipif(not VERSIONS, reason="no Forge venv: bash scripts/install-forge.sh")


@pytest.mark.parametrize("version", VERSIONS)
def test_text_is_retried_inside_one_call_with_a_user_nudge_then_passed_through(version: str) -> None:
    """One call evalkit sees is four the model serves; the nudge is Forge's text as a user message
    after the model's own reply, and it never reaches the client's history: the client gets the last
    text back as a plain answer."""
    with _proxy(version, [_text("It is sunny.")]) as (url, requests):
        answer = _ask(url).json()["choices"][0]
    assert answer["finish_reason"] == "stop" and answer["message"]["content"] == "It is sunny."
    assert len(requests) == 4  # the first try and --max-retries 3
    last = requests[-1]["messages"]
    assert [m["role"] for m in last[-2:]] == ["assistant", "user"] and last[-1]["content"] == FORGE_NUDGE
    assert FORGE_NUDGE != DEFAULT_NUDGE  # evalkit's retry_nudge words it otherwise


@pytest.mark.parametrize("version", VERSIONS)
def test_with_no_retries_an_unknown_tool_comes_back_as_text(version: str) -> None:
    """`--max-retries 0`: a call of a tool the request does not offer is returned to the client as
    text, `[('name', {...})]`. evalkit's rescue_parse would run the call and let the mock answer."""
    with _proxy(version, [_call("get_forecast", '{"city": "Paris"}')], "--max-retries", "0") as (url, requests):
        answer = _ask(url).json()["choices"][0]
    assert len(requests) == 1 and answer["finish_reason"] == "stop"
    assert answer["message"]["content"] == "[('get_forecast', {'city': 'Paris'})]"


@pytest.mark.parametrize("version", VERSIONS)
def test_an_unknown_tool_is_corrected(version: str) -> None:
    """On the tool-result channel, `[UnknownTool] ...`, in every release here: the proxy did so before
    the Guardrails facade had its `tool_error` action (0.7.4). evalkit's retry_nudge judges text only:
    such a call runs, and the mock answers it with an error."""
    script = [_call("get_forecast", '{"city": "Paris"}'), _call("get_weather", '{"city": "Paris"}')]
    with _proxy(version, script) as (url, requests):
        answer = _ask(url).json()["choices"][0]
    assert answer["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    correction = requests[1]["messages"][-1]
    assert correction["role"] == "tool" and correction["content"].startswith("[UnknownTool] Tool 'get_forecast'")


@pytest.mark.parametrize("version", VERSIONS)
def test_arguments_that_do_not_parse(version: str) -> None:
    """0.10.0 corrects them on the tool channel (`[ToolArgValidationError]`); 0.7.3's llama.cpp client
    builds a TextResponse from the reply's `content: null` and fails, and the proxy answers HTTP 502:
    the upgrade gate's infra errors (README "Forge")."""
    script = [_call("get_weather", '{"city": "Par'), _call("get_weather", '{"city": "Paris"}')]
    with _proxy(version, script) as (url, requests):
        response = _ask(url)
    if version == "0.7.3":
        assert response.status_code == 502 and "TextResponse" in response.text
        return
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'
    correction = requests[1]["messages"][-1]
    assert correction["role"] == "tool" and correction["content"].startswith("[ToolArgValidationError] ")
