"""A user's own guard, `examples/my_guard.py`, loaded from a config's `{plugin: "module:Class"}` spec."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Message, Sampling, ToolCall, ToolSpec
from evalkit.errors import ConfigError
from evalkit.run.config import load_config
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import Retry, Stop, TurnView
from evalkit.strategies.retry_nudge import RetryNudge
from tests.fakes import ScriptedBackend, call, calls, text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONFIG = """
name: plugin-demo
scenarios: ["*.yaml"]
backends: [{label: sim, kind: sim, model: small-local}]
strategies:
  guarded:
    - {plugin: "my_guard:MyGuard", options: {forbidden: [delete_file], max_refusals: 1}}
    - retry_nudge
"""


@pytest.fixture
def examples_on_path() -> Iterator[None]:
    """What `PYTHONPATH=examples` does for the CLI."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        yield
    finally:
        sys.path.remove(str(EXAMPLES))
        sys.modules.pop("my_guard", None)


def stack_from_config(tmp_path: Path, text: str = CONFIG) -> list[Any]:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return build_stack(load_config(path).strategy_specs()["guarded"])


def test_the_plugin_is_built_from_the_config_with_its_options(examples_on_path: None, tmp_path: Path) -> None:
    guard, nudge = stack_from_config(tmp_path)
    assert type(guard).__name__ == "MyGuard" and guard.name == "my_guard"
    assert guard.forbidden == ["delete_file"] and guard.max_refusals == 1
    assert isinstance(nudge, RetryNudge)


def test_the_plugins_decisions(examples_on_path: None, tmp_path: Path) -> None:
    guard, _ = stack_from_config(tmp_path)
    view = TurnView(
        messages=[Message(role="user", content="clean up")],
        tools=[ToolSpec(name="delete_file")],
        mode="native",
        supports=lambda f: True,
    )
    forbidden = calls(ToolCall(name="delete_file", arguments={"path": "/"}))
    assert guard.judge(text("ok"), view) is None
    assert guard.judge(calls(call("list_files")), view) is None
    first = guard.judge(forbidden, view)
    assert isinstance(first, Retry) and "delete_file" in first.message
    assert guard.judge(forbidden, view) == Stop("escalated", "kept calling forbidden delete_file")


def test_unknown_plugin_options_and_modules_are_config_errors(examples_on_path: None, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown option"):
        stack_from_config(tmp_path, CONFIG.replace("max_refusals: 1", "max_refusal: 1"))
    with pytest.raises(ConfigError, match="cannot import"):
        build_stack([("no_such_module_xyz:Guard", {})])
    with pytest.raises(ConfigError, match="has no"):
        build_stack([("my_guard:Missing", {})])


def test_the_plugin_runs_in_the_loop(examples_on_path: None, tmp_path: Path) -> None:
    scenario = Scenario.model_validate(
        {
            "id": "clean",
            "family": "sequential_reasoning",
            "turns": ["clean up the temp folder"],
            "tools": [{"name": "delete_file", "mutating": True}, {"name": "list_files"}],
            "reference": {"calls": [{"name": "list_files"}]},
            "check": {"calls": {"required": [{"name": "list_files"}]}},
        }
    )
    backend = ScriptedBackend([calls(call("delete_file", path="/tmp")), calls(call("delete_file", path="/"))])
    state, view = asyncio.run(
        run_loop(
            scenario,
            stack_from_config(tmp_path),
            backend,
            mode="native",
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )
    assert state.outcome == "escalated" and view.executed == []
    assert [(i.strategy, i.action) for i in state.interventions] == [("my_guard", "retry"), ("my_guard", "stop")]
