"""An inspect_ai task equivalent to evalkit's benchmark scenario, for `benchmarks/vs_inspect.py`.

Built from the scenario YAML itself, so both harnesses see the same thing: the same system prompt and
user turn, the scenario's tools as inspect_ai tools (same names, descriptions and JSON schemas)
returning the same mocked results (the first `when` that matches, else the tool's default), and an
agent loop that stops where evalkit's `trust_text` stops: after the terminal tool, on a text reply,
or at the scenario's `max_iterations`. The scorer checks that the calls made are the reference calls.
Importing this module needs inspect_ai (an optional benchmark peer: `pip install inspect_ai openai`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams

from evalkit.scenario.matching import args_match
from evalkit.scenario.model import Scenario, load_scenario
from evalkit.scenario.model import ToolDef as ScenarioTool


def _mock_tool(tool: ScenarioTool) -> ToolDef:
    async def execute(**arguments: Any) -> str:
        mock = next((r for r in tool.results if args_match(r.when, arguments)), tool.default)
        if mock.error is not None:
            return json.dumps({"error": mock.error})
        return json.dumps(mock.returns, ensure_ascii=False)

    # inspect_ai refuses parameters without a description, which the scenario's schemas leave out:
    # each gets its own name (a few bytes more per request than evalkit sends)
    schema = json.loads(json.dumps(tool.parameters))
    for name, prop in schema.get("properties", {}).items():
        prop.setdefault("description", name)
    return ToolDef(execute, name=tool.name, description=tool.description, parameters=ToolParams.model_validate(schema))


def _called(state: TaskState) -> list[tuple[str, dict[str, Any]]]:
    return [
        (call.function, call.arguments)
        for message in state.messages
        if isinstance(message, ChatMessageAssistant)
        for call in message.tool_calls or []
    ]


@solver
def scenario_agent(scenario: Scenario):  # type: ignore[no-untyped-def]  # inspect's decorator is untyped
    tools = [_mock_tool(tool) for tool in scenario.tools]

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.tools = [tool.as_tool() for tool in tools]
        for _ in range(scenario.max_iterations):
            state = await generate(state, tool_calls="single")  # one model call, then its tools run
            calls = state.output.message.tool_calls or []
            if not calls or any(call.function == scenario.terminal_tool for call in calls):
                break
        return state

    return solve


@scorer(metrics=[accuracy()])
def reference_calls(scenario: Scenario):  # type: ignore[no-untyped-def]
    expected = [(call.name, call.arguments) for call in scenario.reference.calls]

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=CORRECT if _called(state) == expected else INCORRECT)

    return score


def scenario_task(path: Path, samples: int) -> Task:
    """`samples` identical samples of the scenario (one inspect sample = one evalkit run)."""
    scenario = load_scenario(path)
    dataset = [
        Sample(
            id=i,
            input=[ChatMessageSystem(content=scenario.system or ""), ChatMessageUser(content=scenario.user_text(0))],
        )
        for i in range(samples)
    ]
    return Task(dataset=dataset, solver=scenario_agent(scenario), scorer=reference_calls(scenario), name=scenario.id)
