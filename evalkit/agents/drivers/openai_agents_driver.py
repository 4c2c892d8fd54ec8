"""The OpenAI Agents SDK as an agent under test: an `Agent` on `OpenAIChatCompletionsModel` (Chat
Completions, not the Responses API), the scenario's tools from `MCPServerStreamableHttp`. Run by
evalkit/agents/openai_agents.py in `.agents/openai-agents/` (openai-agents).

Its own rule decides the run: `max_turns` (`EVALKIT_MAX_TURNS`, the SDK's default 10), ending in
`MaxTurnsExceeded` (`iteration_limit`); the SDK has no retry limit of its own (docs/agents.md).
Tracing is off: it would send every run to OpenAI.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any


async def main() -> dict[str, Any]:
    from agents import Agent, MaxTurnsExceeded, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStreamableHttp
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    env = os.environ
    client = AsyncOpenAI(base_url=env["EVALKIT_MODEL_BASE_URL"], api_key=env["EVALKIT_API_KEY"])
    model = OpenAIChatCompletionsModel(model=env["EVALKIT_MODEL"], openai_client=client)
    max_turns = int(env.get("EVALKIT_MAX_TURNS") or 10)
    params: Any = {"url": env["EVALKIT_MCP_URL"]}
    async with MCPServerStreamableHttp(params=params, name=env["EVALKIT_MCP_SERVER_NAME"]) as server:
        agent: Any = Agent(
            name="evalkit-run", instructions=env.get("EVALKIT_SYSTEM") or None, model=model, mcp_servers=[server]
        )
        try:
            result = await Runner.run(agent, env["EVALKIT_PROMPT"], max_turns=max_turns)
        except MaxTurnsExceeded as exc:
            return {"final": None, "ended": "iteration_limit", "reason": f"MaxTurnsExceeded: {exc}"}
    return {"final": str(result.final_output)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())), flush=True)
