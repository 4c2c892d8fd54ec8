"""`evalkit serve sim` honours what a request asks: `tool_choice` none, named, required/any; `n`; `stream`.

Observed before: `tool_choice: "none"` was ignored (6 of 8 replies still called a tool), a named
function was treated as "any tool", `n: 2` silently gave one choice. Each reply is read as the
official SDKs assemble it, streamed and not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion

from evalkit.backends.sim_server import SimServer
from evalkit.chat import ChatRequest
from evalkit.scenario.model import Scenario
from tests.backends.test_sim_stream import _requests, _scenarios, anthropic_body, openai_body
from tests.sim_http import sim_http

SEEDS = range(2)


@dataclass
class Wire:
    """One server and the clients that talk to it, shared by the module's tests."""

    scenarios: list[Scenario]
    http: httpx.Client
    openai: openai.OpenAI
    anthropic: anthropic.Anthropic


@pytest.fixture(scope="module")
def served() -> Iterator[Wire]:
    scenarios = _scenarios()
    with (
        sim_http(SimServer("small-local", scenarios)) as url,
        httpx.Client(base_url=url, timeout=30) as http,
        openai.OpenAI(base_url=url + "/v1", api_key="sim", max_retries=0) as oa,
        anthropic.Anthropic(base_url=url, api_key="sim", max_retries=0) as an,
    ):
        yield Wire(scenarios, http, oa, an)


def _native(scenarios: list[Scenario]) -> Iterator[ChatRequest]:
    """Each conversation of `_requests` with native tools, `respond` among them."""
    for scenario in scenarios:
        yield from (r for r in _requests(scenario) if r.tools and r.tools[-1].name == "respond")


def _openai_calls(wire: Wire, body: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """(text, called tool names) of the answer unstreamed and as the SDK assembles the stream."""
    raw = wire.http.post("/v1/chat/completions", json=body).json()
    whole = ChatCompletion.model_validate(raw, strict=True)
    with wire.openai.chat.completions.stream(**body) as stream:
        assembled = stream.get_final_completion()
    for completion in (whole, assembled):
        message = completion.choices[0].message
        yield message.content or "", [c.function.name for c in message.tool_calls or [] if c.type == "function"]


def _anthropic_calls(wire: Wire, body: dict[str, Any], seed: int) -> Iterator[tuple[str, list[str]]]:
    headers = {"X-Evalkit-Seed": str(seed)}
    raw = wire.http.post("/v1/messages", json=body, headers=headers).json()
    with wire.anthropic.messages.stream(**body, extra_headers=headers) as stream:
        assembled = stream.get_final_message()
    for message in (AnthropicMessage.model_validate(raw, strict=True), assembled):
        text = "".join(b.text for b in message.content if b.type == "text")
        yield text, [b.name for b in message.content if b.type == "tool_use"]


def _answers(wire: Wire, request: ChatRequest, seed: int, openai_choice: Any, anthropic_choice: Any) -> list[Any]:
    return [
        *_openai_calls(wire, openai_body(request, seed, tool_choice=openai_choice)),
        *_anthropic_calls(wire, anthropic_body(request, tool_choice=anthropic_choice), seed),
    ]


def test_tool_choice_none_is_answered_in_text(served: Wire) -> None:
    called_when_free = 0
    for request in _native(served.scenarios):
        for seed in SEEDS:
            answers = _answers(served, request, seed, "none", {"type": "none"})
            assert all(text and not calls for text, calls in answers), answers
            raw = served.http.post("/v1/chat/completions", json=openai_body(request, seed, tool_choice="auto"))
            called_when_free += bool(raw.json()["choices"][0]["message"].get("tool_calls"))
    assert called_when_free > 10  # the same requests call tools when they may


def test_a_named_tool_is_the_one_called(served: Wire) -> None:
    named = 0
    for request in _native(served.scenarios):
        for tool in request.tools[:1] + request.tools[-1:]:  # the scenario's first tool, and the last (`respond`)
            for seed in SEEDS:
                forced = {"type": "function", "function": {"name": tool.name}}
                answers = _answers(served, request, seed, forced, {"type": "tool", "name": tool.name})
                assert all(calls and set(calls) == {tool.name} for _, calls in answers), (tool.name, answers)
                named += 1
    assert named > 50


def test_required_and_any_force_a_call(served: Wire) -> None:
    for request in _native(served.scenarios):
        for seed in SEEDS:
            assert all(calls for _, calls in _answers(served, request, seed, "required", {"type": "any"}))


@pytest.mark.parametrize(
    ("path", "extra", "problem"),
    [
        ("/v1/chat/completions", {"n": 2}, "n: evalkit's simulated server answers with one choice"),
        ("/v1/chat/completions", {"n": 0}, "n:"),
        ("/v1/chat/completions", {"n": "2"}, "n:"),
        ("/v1/chat/completions", {"stream": "yes"}, "stream: Input should be a valid boolean"),
        ("/v1/chat/completions", {"stream_options": {"include_usage": True}}, "stream_options: only allowed"),
        (
            "/v1/chat/completions",
            {"tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "tool_choice: names the tool 'nope'",
        ),
        ("/v1/messages", {"tool_choice": {"type": "tool", "name": "nope"}}, "tool_choice: names the tool 'nope'"),
        ("/v1/messages", {"tool_choice": {"type": "tool"}}, "tool_choice: names the tool ''"),
    ],
)
def test_what_cannot_be_honoured_is_a_clear_400(served: Wire, path: str, extra: dict[str, Any], problem: str) -> None:
    request = next(_native(served.scenarios))
    body = openai_body(request, 1) if path.endswith("completions") else anthropic_body(request)
    answer = served.http.post(path, json={**body, **extra})
    assert served.http.post(path, json=body).status_code == 200
    assert answer.status_code == 400
    assert answer.json()["error"]["message"].startswith(problem)
    if path.endswith("completions"):  # the SDK raises it as the API's own error
        with pytest.raises(openai.BadRequestError, match="n: evalkit"):
            served.openai.chat.completions.create(**openai_body(request, 1), n=2)
