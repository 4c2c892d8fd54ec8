"""The agents of a config for one phase: what an executor holds while the phase's runs go.

The built agents by label (`evalkit.agents.registry`, checked before any output file existed), and the
model fronts and MCP server they share (evalkit/agents/serving.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from evalkit.agents.base import Agent
from evalkit.agents.entry import AgentEntry
from evalkit.agents.execute import AgentSpec, execute_agent_run
from evalkit.agents.registry import build_agents
from evalkit.agents.serving import AgentServices
from evalkit.backends.base import Backend
from evalkit.results.records import RunRecord
from evalkit.scenario.model import Scenario

__all__ = ["AgentPhase"]


class AgentPhase:
    """A phase's agents and the services their runs use."""

    def __init__(self, entries: Mapping[str, AgentEntry], agents: dict[str, Agent], services: AgentServices):
        self.entries, self.agents, self.services = entries, agents, services

    @classmethod
    async def open(
        cls,
        entries: Mapping[str, AgentEntry],
        base_dir: Path,
        backends: Mapping[str, Backend],
        models: Mapping[str, str],
        scenarios: Sequence[Scenario],
    ) -> AgentPhase:
        agents = build_agents(entries, base_dir)
        return cls(entries, agents, await AgentServices.open(backends, models, scenarios))

    async def run(self, spec: AgentSpec, agent_label: str, model: str, simulated: bool) -> RunRecord:
        agent, entry = self.agents[agent_label], self.entries[agent_label]
        return await execute_agent_run(spec, agent, entry, self.services, model, simulated)

    async def aclose(self) -> None:
        await self.services.aclose()
