"""An agent column of a run config: which agent loop runs, with what budget and time limit.

    agents:
      pydantic-ai: {agent: pydantic-ai, budget: 20, time_limit_s: 120}
      mine:        {command: [./my-agent, --quiet], budget: 10}
      built:       {module: "mypkg.agents:MyAgent", options: {retries: 2}}

Each label is a column beside the guard stacks (`strategies`): its runs go through the agent instead
of evalkit's own loop, in native tool mode, on each backend entry whose `strategies` (if given)
names the label. Exactly one of `agent` (a registered name: `evalkit.agents.registry`), `command`
(an argv; the run's facts come in `EVALKIT_*` variables) or `module` (`module:Class`, an `Agent`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from evalkit._model import StrictModel

__all__ = ["AgentEntry"]


class AgentEntry(StrictModel):
    agent: str | None = None
    command: list[str] | None = Field(None, min_length=1)
    module: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    # served model calls per run; a run that asks for more is ended and recorded as `runaway`
    budget: int = Field(30, ge=1, le=100_000)
    time_limit_s: float = Field(300.0, gt=0, le=86_400)
    # after SIGINT, how long the agent has to stop before its whole process tree is killed
    grace_s: float = Field(5.0, ge=0, le=600)

    @model_validator(mode="after")
    def _one_way_to_run(self) -> AgentEntry:
        given = [name for name in ("agent", "command", "module") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of agent (a name), command (an argv) or module (module:Class)")
        return self

    def title(self) -> str:
        """What the entry runs, for messages."""
        if self.agent is not None:
            return self.agent
        return self.module if self.module is not None else " ".join(self.command or [])
