"""`tool_choice`: forced tool calls through the API in native mode; unsupported in prompt mode."""

from __future__ import annotations

import asyncio

from evalkit.backends.base import UNSATISFIABLE, RetryPolicy
from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim import SimulatedBackend
from evalkit.chat import ChatRequest, Message, Sampling, ToolSpec
from evalkit.run.loop import missing_features, run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import TurnView
from evalkit.strategies.tool_choice import ToolChoiceRequired
from tests.fakes import ScriptedBackend, text

TOOLS = [ToolSpec(name="get_weather")]


def view() -> TurnView:
    return TurnView(messages=[Message(role="user", content="hi")], tools=TOOLS, mode="native", supports=lambda f: True)


def test_sets_required_when_tools_are_offered() -> None:
    out = ToolChoiceRequired().prepare(ChatRequest(messages=[], tools=TOOLS), view())
    assert out.tool_choice == "required" and out.tools == TOOLS


def test_leaves_tool_less_requests_alone() -> None:
    assert ToolChoiceRequired().prepare(ChatRequest(messages=[]), view()).tool_choice is None


def test_judges_nothing() -> None:
    assert ToolChoiceRequired().judge(text("hello"), view()) is None


def test_native_needs_tool_choice_required_and_prompt_mode_is_never_supported() -> None:
    guard = ToolChoiceRequired()
    assert guard.requires("native") == {"tool_choice_required"}
    assert guard.requires("prompt") == {"tool_choice_in_prompt_mode"}
    assert "tool_choice_in_prompt_mode" in UNSATISFIABLE


def test_the_simulated_backend_supports_native_forcing_but_not_prompt_mode_forcing() -> None:
    sim = SimulatedBackend(entry=BackendEntry(label="s", kind="sim", model="small-local"))
    stack = build_stack([("tool_choice", {})])
    assert missing_features(sim, stack, "native", True) == []
    assert missing_features(sim, stack, "prompt", True) == ["tool_choice_in_prompt_mode"]


SCENARIO = Scenario.model_validate(
    {
        "id": "w",
        "family": "casual_greeting",
        "turns": ["hi"],
        "tools": [{"name": "get_weather"}],
        "reference": {"reply": "Hi!"},
        "check": {"no_tool_calls": True},
    }
)


def run(backend: ScriptedBackend, mode: str) -> str:
    state, _ = asyncio.run(
        run_loop(
            SCENARIO,
            build_stack([("tool_choice", {})]),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )
    return state.outcome


def test_a_backend_without_forcing_makes_the_cell_unsupported() -> None:
    assert run(ScriptedBackend([], lacks={"tool_choice_required"}), "native") == "unsupported"
    assert run(ScriptedBackend([], lacks=set(UNSATISFIABLE)), "prompt") == "unsupported"


def test_the_backend_receives_required() -> None:
    backend = ScriptedBackend([text("Hi!")])
    assert run(backend, "native") == "final_answer"
    assert backend.requests[0].tool_choice == "required"
