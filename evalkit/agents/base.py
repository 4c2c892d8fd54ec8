"""The agent-adapter contract: what an agent loop under test is given, and what evalkit asks of it.

An agent is a program evalkit does not change (Cline, a pydantic-ai or OpenAI Agents SDK script, a
command of your own). For each run evalkit gives it an `AgentRun`: a model URL that names the run
(`/run/<token>/v1`, so every call the model serves is the run's, seeded as the run: see
`evalkit.backends.run_url`), an MCP endpoint serving exactly the scenario's mocked tools, a fresh HOME
and working folder, and the scenario's user turn. An `Agent` turns that into a command line and an
environment, and reads the agent's final reply back from its output. The runner
(`evalkit.agents.process`) starts the command, enforces the time limit and the served-call budget,
and scores the run from what was observed (`evalkit.agents.execute`).

One module per agent (`pydantic_ai.py`, `openai_agents.py`, `cline.py`), registered by name in
`evalkit.agents.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

__all__ = ["MCP_SERVER_NAME", "Agent", "AgentEnd", "AgentRun", "HasPlaceholders", "ReportsEnd"]

MCP_SERVER_NAME = "evalkit"  # Cline names the tools `evalkit__<tool>`


@dataclass(frozen=True)
class AgentRun:
    """Everything an agent needs for one run."""

    model_base_url: str  # OpenAI-compatible base URL for THIS run, ending in /v1 (…/run/<token>/v1)
    api_key: str  # a dummy key; never recorded
    model: str  # the model name to send
    mcp_url: str  # streamable-HTTP MCP endpoint serving exactly this run's scenario tools
    mcp_server_name: str  # MCP_SERVER_NAME
    prompt: str  # the scenario's user turn (an adapter whose CLI needs whitespace in it adds it)
    home: Path  # a fresh temporary HOME
    workdir: Path  # a fresh temporary working folder
    time_limit_s: float
    system: str = ""  # the scenario's system prompt: an agent that takes instructions may pass it on
    run_id: str = ""  # for logs only: the model URL's token already names the run
    options: dict[str, object] = field(default_factory=dict)  # the config entry's `options`


class Agent(Protocol):
    """One agent loop under test (a module per agent)."""

    name: str

    def check(self) -> None:
        """Raise `ConfigError` (one line: exit 2) when the agent cannot run here: not installed, a
        binary that is not executable, no Node for a Node agent. Called once before any run."""
        ...

    def command(self, run: AgentRun) -> list[str]:
        """The argv of one run; may write config files under `run.home`."""
        ...

    def environment(self, run: AgentRun) -> dict[str, str]:
        """Variables added to the run's environment (HOME and the working folder are set by the runner)."""
        ...

    def final_reply(self, stdout: str) -> str | None:
        """The agent's last reply, read from its standard output (None: it gave none)."""
        ...

    def describe(self) -> dict[str, str]:
        """name, version and install hash, for the results header."""
        ...


@dataclass(frozen=True)
class AgentEnd:
    """How an agent says it stopped on its own, short of an answer: its retry limit (`failed`) or
    its turn limit (`iteration_limit`). These are verdicts on the agent, not infra errors."""

    outcome: Literal["failed", "iteration_limit"]
    reason: str


@runtime_checkable
class ReportsEnd(Protocol):
    """An agent that can tell from its output that it gave up (optional beside `Agent`)."""

    def ended(self, stdout: str) -> AgentEnd | None: ...


@runtime_checkable
class HasPlaceholders(Protocol):
    """An agent whose requests hold texts that vary from day to day (optional beside `Agent`): Cline's
    system prompt holds the date. The runner replaces the run's temporary folders itself."""

    def placeholders(self, run: AgentRun) -> dict[str, str]:
        """Text -> fixed placeholder (`{date}`), in everything recorded and in how a replay matches."""
        ...
