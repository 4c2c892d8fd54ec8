"""The OpenAI Agents SDK (`openai-agents`) as an agent under test; its driver:
drivers/openai_agents_driver.py. Option: `max_turns` (the Runner's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from evalkit.agents.venv_agent import VenvAgent

__all__ = ["OpenAiAgentsAgent"]


class OpenAiAgentsAgent(VenvAgent):
    name = "openai-agents"
    driver = "openai_agents_driver.py"
    knobs: ClassVar[Mapping[str, str]] = {"max_turns": "EVALKIT_MAX_TURNS"}
