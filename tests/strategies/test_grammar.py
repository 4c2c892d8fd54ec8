"""The `grammar` strategy's requests and decisions, and (marked `server`) a real llama-server check."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends.base import RetryPolicy
from evalkit.backends.serve import LlamaServer
from evalkit.chat import ChatRequest, Completion, Message, Sampling, ToolSpec
from evalkit.errors import ConfigError
from evalkit.prompt_mode import parse_strict_calls, render_tool_prompt
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario, load_scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import TurnView
from evalkit.strategies.gbnf import tool_call_grammar, tool_call_schema
from evalkit.strategies.grammar import Grammar
from tests.fakes import ScriptedBackend, text
from tests.integration.conftest import MODEL, require_llama_server
from tests.strategies.gbnf_checker import parse_gbnf

WEATHER = ToolSpec(
    name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
)
ROOT = Path(__file__).resolve().parents[2]


def view(tools: list[ToolSpec] | None = None) -> TurnView:
    return TurnView(
        messages=[Message(role="user", content="weather in Paris?")],
        tools=[WEATHER] if tools is None else tools,
        mode="prompt",
        supports=lambda f: True,
    )


def request(tools: list[ToolSpec] | None = None) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content="weather in Paris?")], tools=[WEATHER] if tools is None else tools
    )


def test_requires_grammar_with_tools_in_native_mode_and_the_constraint_kind_in_prompt_mode() -> None:
    for mode in ("grammar", "schema", "hybrid"):
        assert Grammar(mode=mode).requires("native") == {"grammar_with_tools"}
    assert Grammar(mode="grammar").requires("prompt") == {"grammar"}
    assert Grammar(mode="schema").requires("prompt") == {"json_schema"}
    assert Grammar(mode="hybrid").requires("prompt") == set()


def test_grammar_mode_sets_a_valid_required_grammar() -> None:
    out = Grammar().prepare(request(), view())
    assert out.constraint is not None and out.constraint.kind == "grammar" and not out.constraint.optional
    grammar = parse_gbnf(out.constraint.grammar or "")
    assert grammar.matches('{"name": "get_weather", "arguments": {"city": "Paris"}}')
    assert not grammar.matches('{"name": "get_time", "arguments": {}}')
    assert out.messages == request().messages and out.tools == [WEATHER]


def test_schema_mode_sets_the_equivalent_json_schema() -> None:
    out = Grammar(mode="schema").prepare(request(), view())
    assert out.constraint is not None and out.constraint.kind == "json_schema"
    assert out.constraint.json_schema == tool_call_schema([WEATHER]) and out.constraint.grammar is None


def test_hybrid_mode_marks_the_grammar_optional() -> None:
    out = Grammar(mode="hybrid").prepare(request(), view())
    assert out.constraint is not None and out.constraint.optional
    assert out.constraint.grammar == tool_call_grammar([WEATHER])


def test_options_reach_the_grammar() -> None:
    out = Grammar(parallel=True, allow_text=True, max_string_chars=40).prepare(request(), view())
    assert out.constraint is not None
    assert out.constraint.grammar == tool_call_grammar([WEATHER], parallel=True, allow_text=True, max_string_chars=40)


def test_no_tools_means_no_constraint() -> None:
    assert Grammar().prepare(request(tools=[]), view(tools=[])).constraint is None


def test_respond_is_an_alternative_when_respond_tool_comes_first() -> None:
    respond_tool, grammar = build_stack([("respond_tool", {}), ("grammar", {})])
    out = grammar.prepare(respond_tool.prepare(request(), view()), view())
    assert out.constraint is not None
    assert parse_gbnf(out.constraint.grammar or "").matches('{"name": "respond", "arguments": {"message": "Hi!"}}')


def test_the_constraint_is_built_once_per_tool_set() -> None:
    strategy = Grammar()
    first = strategy.prepare(request(), view()).constraint
    assert strategy.prepare(request(), view()).constraint is first
    other = strategy.prepare(request(tools=[WEATHER, ToolSpec(name="get_time")]), view()).constraint
    assert other is not first


def test_judge_notes_a_dropped_constraint_and_decides_nothing() -> None:
    v = view()
    assert Grammar(mode="hybrid").judge(Completion(text="hi", constraint_dropped=True), v) is None
    assert v.notes == [("grammar", "backend refused the constraint; this call ran unconstrained")]
    v2 = view()
    assert Grammar().judge(Completion(text='{"name": "get_weather"}'), v2) is None and v2.notes == []


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "regex"},
        {"mode": "schema", "allow_text": True},
        {"max_string_chars": 0},
        {"max_string_chars": 5000},
        {"strict": True},
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        build_stack([("grammar", options)])


# --- in the loop ---------------------------------------------------------------------------------

GREETING = Scenario.model_validate(
    {
        "id": "g",
        "family": "casual_greeting",
        "turns": ["hi!"],
        "tools": [{"name": "get_weather", "parameters": WEATHER.parameters}],
        "reference": {"reply": "Hi!"},
        "check": {"no_tool_calls": True},
    }
)


def run(stack: list[str], mode: str, backend: ScriptedBackend) -> Any:
    return asyncio.run(
        run_loop(
            GREETING,
            build_stack([(s, {}) for s in stack]),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )


def test_native_mode_cells_are_unsupported() -> None:
    state, _ = run(["grammar"], "native", ScriptedBackend([], lacks={"grammar_with_tools"}))
    assert state.outcome == "unsupported" and "grammar_with_tools" in (state.error or "")


def test_prompt_mode_sends_the_grammar_with_respond_and_no_tool_fields() -> None:
    backend = ScriptedBackend([text('{"name": "respond", "arguments": {"message": "Hello!"}}')])
    state, _ = run(["respond_tool", "grammar"], "prompt", backend)
    sent = backend.requests[0]
    assert sent.tools == [] and sent.constraint is not None and "respond" in (sent.constraint.grammar or "")
    assert state.reply == "Hello!"


def test_a_dropped_constraint_is_recorded_as_an_intervention() -> None:
    backend = ScriptedBackend([Completion(text="Hello!", constraint_dropped=True)])
    state, _ = run(["grammar"], "prompt", backend)
    assert [(i.strategy, i.action) for i in state.interventions] == [("grammar", "judge")]


# --- a real llama-server (see README, "Real models") --------------------------------------------


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    if os.environ.get("EVALKIT_LLAMA_URL"):
        yield os.environ["EVALKIT_LLAMA_URL"]
        return
    require_llama_server()  # skips, or fails under CI, naming what to install
    # the model's own template: these tests send constraints, never tools
    with LlamaServer(MODEL, template=None, parallel=1, ctx_size=2048, threads=1) as server:
        yield server.url


def _tool_sets() -> list[tuple[str, list[ToolSpec]]]:
    respond = ToolSpec(
        name="respond",
        parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    )
    sets = []
    for name in (
        "sequential_reasoning/medication_chain",
        "action_completion/fix_typo",
        "data_gap_recovery/hr_profile",
        "relevance_detection/square_root",
    ):
        path = ROOT / "scenarios" / f"{name}.yaml"
        if path.exists():
            scenario = load_scenario(path)
            sets.append((f"{name}: {scenario.turns[0]}", [t.spec() for t in scenario.tools] + [respond]))
    return sets


def _ask(url: str, tools: list[ToolSpec], question: str, constraint: dict[str, Any]) -> str:
    body = {
        "messages": [{"role": "system", "content": render_tool_prompt(tools)}, {"role": "user", "content": question}],
        "max_tokens": 200,
        "temperature": 0,
        "seed": 1,
        **constraint,
    }
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=120)
    assert response.status_code == 200, response.text  # an invalid grammar is a 400/500 here
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "stop", choice
    content: str = choice["message"]["content"]
    return content


@pytest.mark.server
@pytest.mark.parametrize("kind", ["grammar", "json_schema"])
def test_llama_server_accepts_the_constraint_and_returns_a_valid_call(llama_url: str, kind: str) -> None:
    sets = _tool_sets()
    assert sets, "scenario files not found"
    for question, tools in sets:
        if kind == "grammar":
            constraint: dict[str, Any] = {"grammar": tool_call_grammar(tools, max_string_chars=60)}
        else:
            constraint = {"json_schema": tool_call_schema(tools, max_string_chars=60)}
        content = _ask(llama_url, tools, question, constraint)
        calls = parse_strict_calls(content)
        assert len(calls) == 1 and not calls[0].malformed, content
        assert calls[0].name in {t.name for t in tools}, content
        assert json.loads(content)["name"] == calls[0].name


@pytest.mark.server
def test_llama_server_rejects_an_invalid_grammar(llama_url: str) -> None:
    """The server check above means something: a broken grammar is refused, not ignored."""
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "grammar": "root ::= undefined-rule"}
    assert httpx.post(f"{llama_url}/v1/chat/completions", json=body, timeout=60).status_code >= 400


@pytest.mark.server
def test_llama_server_parses_the_tricky_schema_grammars(llama_url: str) -> None:
    from tests.strategies.test_gbnf import TRICKY

    for options in ({}, {"parallel": True, "allow_text": True, "max_string_chars": 100}):
        grammar = tool_call_grammar(TRICKY, **options)  # type: ignore[arg-type]
        body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "grammar": grammar}
        response = httpx.post(f"{llama_url}/v1/chat/completions", json=body, timeout=60)
        assert response.status_code == 200, response.text
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "json_schema": tool_call_schema(TRICKY)}
    assert httpx.post(f"{llama_url}/v1/chat/completions", json=body, timeout=60).status_code == 200
