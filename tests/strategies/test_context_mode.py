"""`context_mode`: minimal keeps the current turn only, full changes nothing, auto decides per turn."""

from __future__ import annotations

import asyncio

import pytest

from evalkit.backends.base import RetryPolicy
from evalkit.chat import ChatRequest, Message, Sampling, ToolCall, ToolSpec
from evalkit.errors import ConfigError
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import TurnView
from evalkit.strategies.context_mode import DEFAULT_PREFIX, DEFAULT_SYSTEM, ContextMode, choose_context
from tests.fakes import ScriptedBackend, call, calls, text

TOOLS = [ToolSpec(name="get_weather"), ToolSpec(name="read_file")]
FIRST_TURN = [
    Message(role="system", content="You help with travel. The user lives in Oslo."),
    Message(role="user", content="hi"),
    Message(role="assistant", content="Hello! How can I help?", origin="model"),
]
CURRENT_TURN = [
    Message(role="user", content="What's the weather in Paris, then in Rome?"),
    Message(
        role="assistant",
        origin="model",
        tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})],
    ),
    Message(role="tool", content='{"sky": "sunny"}', tool_call_id="c1", name="get_weather", origin="mock"),
    Message(role="user", content="Call a tool.", origin="guard"),
]
HISTORY = FIRST_TURN + CURRENT_TURN


def view(messages: list[Message] = HISTORY) -> TurnView:
    return TurnView(messages=list(messages), tools=TOOLS, mode="native", supports=lambda f: True)


def request(messages: list[Message] = HISTORY, tools: list[ToolSpec] = TOOLS) -> ChatRequest:
    return ChatRequest(messages=list(messages), tools=tools)


def test_minimal_keeps_a_short_system_prompt_and_the_whole_current_turn() -> None:
    v = view()
    out = ContextMode(mode="minimal").prepare(request(), v)
    system, user, *rest = out.messages
    assert system.role == "system" and system.content.startswith(DEFAULT_SYSTEM)
    assert "The user lives in Oslo." in system.content  # the scenario's substrate stays
    assert user.content == f"{DEFAULT_PREFIX}\n\nUser request: What's the weather in Paris, then in Rome?"
    assert rest == CURRENT_TURN[1:]  # the chain so far: call, result, nudge
    assert "Hello! How can I help?" not in [m.content for m in out.messages]
    assert v.notes == [("context_mode", "minimal: configured")]
    assert out.tools == TOOLS


def test_minimal_can_drop_the_scenario_system_prompt_and_use_custom_texts() -> None:
    out = ContextMode(mode="minimal", keep_system=False, system="Use tools.", prefix="TOOLS!").prepare(
        request(), view()
    )
    assert out.messages[0].content == "Use tools."
    assert out.messages[1].content.startswith("TOOLS!\n\nUser request: ")


def test_minimal_does_not_touch_the_view_history() -> None:
    v = view()
    ContextMode(mode="minimal").prepare(request(), v)
    assert v.messages == HISTORY


def test_full_leaves_the_request_unchanged() -> None:
    v = view()
    assert ContextMode(mode="full").prepare(request(), v) == request()
    assert v.notes == [("context_mode", "full: configured")]


def test_without_tools_every_mode_is_full() -> None:
    for mode in ("minimal", "auto"):
        v = view()
        assert ContextMode(mode=mode).prepare(request(tools=[]), v) == request(tools=[])
        assert v.notes == [("context_mode", "full: no tools offered")]


def test_minimal_with_no_user_message_yet_changes_nothing() -> None:
    only_system = [Message(role="system", content="sys")]
    assert ContextMode(mode="minimal").prepare(request(only_system), view(only_system)) == request(only_system)


@pytest.mark.parametrize(
    "message, expected, why",
    [
        ("Fix the typo in README.md", "minimal", "file path 'README.md'"),
        ("open src/app/main.py please", "minimal", "file path 'src/app/main.py'"),
        ("Set debug to false in config/prod.yaml.", "minimal", "file path 'config/prod.yaml'"),
        ("What's the weather like in Paris?", "minimal", "mentions tool word 'weather'"),
        ("use read_file on it", "minimal", "mentions tool word 'read_file'"),
        ("Please update my booking", "minimal", "tool keyword 'update'"),
        ("hi", "full", "conversational keyword 'hi'"),
        ("Thanks!", "full", "conversational keyword 'thanks'"),
        ("Explain recursion to a child", "full", "conversational keyword 'explain'"),
        ("Write me a short story about a cat", "minimal", "tool keyword 'write'"),  # tool cues win (docs/guards.md)
        ("What is the square root of 144?", "minimal", "no cue; tools offered"),
        ("this is thinking", "minimal", "no cue; tools offered"),  # 'hi' inside words is not a greeting
    ],
)
def test_auto_heuristic(message: str, expected: str, why: str) -> None:
    assert choose_context(
        message,
        TOOLS,
        tool_keywords=["update", "write"],
        text_keywords=["hi", "thanks", "explain"],
        when_uncertain="minimal",
    ) == (expected, why)


def test_auto_when_uncertain_is_configurable() -> None:
    v = view([Message(role="user", content="What is the square root of 144?")])
    strategy = ContextMode(mode="auto", when_uncertain="full")
    out = strategy.prepare(request(v.messages), v)
    assert out.messages == v.messages and v.notes == [("context_mode", "full: no cue")]


def test_auto_decides_on_the_latest_scenario_user_message_not_on_guard_nudges() -> None:
    v = view()
    ContextMode(mode="auto").prepare(request(), v)  # latest scenario message mentions the weather
    assert v.notes == [("context_mode", "minimal: mentions tool word 'weather'")]


@pytest.mark.parametrize("options", [{"mode": "tiny"}, {"when_uncertain": "auto"}, {"minimal": True}])
def test_bad_options_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        build_stack([("context_mode", options)])


# --- in the loop: what auto chose is recorded per call --------------------------------------------

TWO_TURNS = Scenario.model_validate(
    {
        "id": "two",
        "family": "casual_greeting",
        "system": "Be brief.",
        "turns": ["hi", "weather in Paris?"],
        "tools": [{"name": "get_weather", "results": [{"returns": {"sky": "sunny"}}]}],
        "reference": {"reply": "Hi!"},
        "check": {"no_tool_calls": True},
    }
)


def test_loop_records_the_choice_per_call_and_chains_keep_their_results() -> None:
    backend = ScriptedBackend([text("Hello!"), calls(call("get_weather", city="Paris")), text("Sunny.")])
    state, _ = asyncio.run(
        run_loop(
            TWO_TURNS,
            build_stack([("context_mode", {})]),
            backend,
            mode="native",
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )
    notes = [(i.call_index, i.reason) for i in state.interventions if i.strategy == "context_mode"]
    assert notes == [
        (0, "full: conversational keyword 'hi'"),
        (1, "minimal: mentions tool word 'weather'"),
        (2, "minimal: mentions tool word 'weather'"),
    ]
    first, second, third = backend.requests
    assert [m.content for m in first.messages] == ["Be brief.", "hi"]
    assert "Hello!" not in [m.content for m in second.messages]
    assert [m.role for m in third.messages] == ["system", "user", "assistant", "tool"]
