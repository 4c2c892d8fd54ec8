"""An agent column in a run config: what is accepted, and the one-line errors for what is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.run.config import load_config
from evalkit.run.matrix import iter_runs
from evalkit.run.preflight import config_scenarios
from tests.agents.conftest import ROOT

HEAD = (
    f"name: c\nruns: 2\nscenarios: [{ROOT / 'scenarios/casual_greeting/hi.yaml'}]\n"
    "backends:\n  - {label: sim, kind: sim, model: small-local}\n"
)


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + text)
    return load_config(path)


def test_agents_are_columns_beside_the_guard_stacks_in_native_mode_only(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "modes: [native, prompt]\nstrategies:\n  t: [trust_text]\nagents:\n  a: {command: ['true']}\n",
    )
    runs = list(iter_runs(config, config_scenarios(config)))  # type: ignore[arg-type]
    cells = sorted({(r.cell.strategy, r.cell.mode, r.agent) for r in runs})
    assert cells == [("a", "native", "a"), ("t", "native", None), ("t", "prompt", None)]
    assert config.cell_count(1) == 3  # type: ignore[attr-defined]
    # seeds pair an agent's runs with the stacks' runs of the same index
    seeds = {(r.cell.strategy, r.cell.mode, r.index): r.seed for r in runs}
    assert seeds[("a", "native", 1)] == seeds[("t", "native", 1)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents:\n  a: {}\n", "give exactly one of agent (a name), command (an argv) or module (module:Class)"),
        ("agents:\n  a: {agent: x, command: [y]}\n", "give exactly one of"),
        ("agents:\n  a: {agent: cline, budget: 0}\n", "agents.a.budget"),
        ("agents:\n  a: {agent: cline, time_limit_s: 0}\n", "agents.a.time_limit_s"),
        ("agents:\n  a: {agent: cline, colour: red}\n", "agents.a.colour"),
        ("strategies:\n  a: [trust_text]\nagents:\n  a: {agent: cline}\n", "agents.a: the label is also a guard stack"),
        ("modes: [prompt]\nagents:\n  a: {agent: cline}\n", "agents.a: agents run in native mode"),
        ("", "give at least one guard stack (or an agent under `agents`)"),
    ],
)
def test_a_bad_agent_entry_is_an_error_naming_its_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_plugin_agent_that_is_no_agent_is_refused(tmp_path: Path) -> None:
    from evalkit.agents.entry import AgentEntry
    from evalkit.agents.registry import build_agent

    with pytest.raises(
        ConfigError, match=r"agents.m: tests.agents.test_entry:NotAnAgent is not an agent \(it has no check\(\)\)"
    ):
        build_agent("m", AgentEntry(module="tests.agents.test_entry:NotAnAgent"), tmp_path)


class NotAnAgent:
    def __init__(self, options: object, base_dir: object) -> None:
        self.options = options
