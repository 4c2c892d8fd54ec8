"""pydantic-ai (`pydantic-ai-slim[openai,mcp]`) as an agent under test; its driver:
drivers/pydantic_ai_driver.py. Options: `retries` (the Agent's), `request_limit` (its UsageLimits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from evalkit.agents.venv_agent import VenvAgent

__all__ = ["PydanticAiAgent"]


class PydanticAiAgent(VenvAgent):
    name = "pydantic-ai"
    driver = "pydantic_ai_driver.py"
    knobs: ClassVar[Mapping[str, str]] = {"retries": "EVALKIT_RETRIES", "request_limit": "EVALKIT_REQUEST_LIMIT"}
