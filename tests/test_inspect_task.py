"""The inspect_ai side of `benchmarks/vs_inspect.py` answers exactly what evalkit's mocks answer.

The benchmark compares two harnesses on "the same scenario"; that holds only if inspect_ai's tools
return byte-for-byte the tool messages evalkit sends and offer the same schemas. inspect_ai is an
optional benchmark peer, so this is skipped where it is not installed (`pip install inspect_ai openai`).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from evalkit.chat import ToolCall
from evalkit.scenario.mocks import execute_call, result_text
from evalkit.scenario.model import Scenario, load_scenario

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from inspect_task import _mock_tool, scenario_task  # noqa: E402

SCENARIO = ROOT / "scenarios/sequential_reasoning/medication_chain.yaml"


def _both(scenario: Scenario, name: str, arguments: dict[str, Any]) -> tuple[str, str]:
    tool = scenario.tool(name)
    assert tool is not None
    ours = result_text(execute_call(scenario, ToolCall(name=name, arguments=arguments)))
    theirs = asyncio.run(_mock_tool(tool).tool(**arguments))
    return ours, theirs


def test_reference_calls_get_evalkits_tool_messages() -> None:
    scenario = load_scenario(SCENARIO)
    for call in scenario.reference.calls:
        ours, theirs = _both(scenario, call.name, call.arguments)
        assert theirs == ours, call.name


def test_unmatched_arguments_get_the_same_default_error() -> None:
    scenario = load_scenario(SCENARIO)
    ours, theirs = _both(scenario, "get_patient", {"patient_id": "P-999"})
    assert theirs == ours
    assert "error" in theirs


def test_schemas_match_apart_from_the_descriptions_inspect_requires() -> None:
    scenario = load_scenario(SCENARIO)
    for tool in scenario.tools:
        params = _mock_tool(tool).parameters.model_dump(exclude_none=True)
        for prop in params["properties"].values():
            prop.pop("description")
        assert params["properties"] == tool.parameters["properties"], tool.name
        assert params["required"] == tool.parameters["required"], tool.name


def test_task_has_one_sample_per_run_with_the_scenarios_prompt() -> None:
    scenario = load_scenario(SCENARIO)
    task = scenario_task(SCENARIO, 3)
    assert len(task.dataset) == 3
    system, user = task.dataset[0].input
    assert (system.text, user.text) == (scenario.system, scenario.user_text(0))
