"""Agents by name, and building the `Agent` a config's agent entry names.

A registered agent is a `module:Class` string, imported only when a config uses it (an agent's
module may need files that only its install script makes). Each class is built as
`Class(options, base_dir)`: the entry's `options` and the config file's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit._imports import load_class
from evalkit.agents.base import Agent
from evalkit.agents.command import CommandAgent
from evalkit.agents.entry import AgentEntry
from evalkit.errors import ConfigError
from evalkit.scenario.model import Scenario

__all__ = ["AGENTS", "build_agent", "build_agents", "check_agents", "describe_agents"]

AGENTS: Mapping[str, str] = {
    "pydantic-ai": "evalkit.agents.pydantic_ai:PydanticAiAgent",
    "openai-agents": "evalkit.agents.openai_agents:OpenAiAgentsAgent",
    "cline": "evalkit.agents.cline:ClineAgent",
}

_METHODS = ("check", "command", "environment", "final_reply", "describe")


def build_agent(label: str, entry: AgentEntry, base_dir: Path) -> Agent:
    """The agent of `entry` (config label `label`); a `ConfigError` naming the entry when it cannot be built."""
    if entry.command is not None:
        return CommandAgent(entry.command, entry.options, base_dir)
    target = entry.module
    if entry.agent is not None:
        target = AGENTS.get(entry.agent)
        if target is None:
            known = ", ".join(sorted(AGENTS))
            raise ConfigError(f"agents.{label}.agent: unknown agent {entry.agent!r} (known: {known})")
    assert target is not None
    cls: Any = load_class(target)
    try:
        agent = cls(dict(entry.options), base_dir)
    except ConfigError as exc:
        raise ConfigError(f"agents.{label}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"agents.{label}: cannot build {target}: {exc}") from None
    missing = [name for name in _METHODS if not hasattr(agent, name)]
    if missing:
        raise ConfigError(f"agents.{label}: {target} is not an agent (it has no {missing[0]}())")
    return agent  # type: ignore[no-any-return]


def build_agents(entries: Mapping[str, AgentEntry], base_dir: Path) -> dict[str, Agent]:
    return {label: build_agent(label, entry, base_dir) for label, entry in entries.items()}


def check_agents(entries: Mapping[str, AgentEntry], base_dir: Path, scenarios: Sequence[Scenario]) -> None:
    """Every agent can run here, on every scenario (a one-line `ConfigError` otherwise)."""
    if not entries:
        return
    for label, agent in build_agents(entries, base_dir).items():
        try:
            agent.check()
        except ConfigError as exc:
            raise ConfigError(f"agents.{label}: {exc}") from None
    several = next((s for s in scenarios if len(s.turns) > 1), None)
    if several is not None:
        raise ConfigError(
            f"{several.source}: {len(several.turns)} user turns: an agent under test is given one (its first); "
            "run multi-turn scenarios with guard stacks"
        )


def describe_agents(entries: Mapping[str, AgentEntry], base_dir: Path) -> dict[str, dict[str, Any]]:
    """name, version and install hash of each agent, by label (the results header's `agents`)."""
    return {label: dict(agent.describe()) for label, agent in build_agents(entries, base_dir).items()}
