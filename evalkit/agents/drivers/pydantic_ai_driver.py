"""pydantic-ai as an agent under test: `Agent` on an OpenAI-compatible model, the scenario's tools as an
MCP toolset. Run by evalkit/agents/pydantic_ai.py in `.agents/pydantic-ai/` (pydantic-ai-slim[openai,mcp]).

Its own rules decide the run, as in an application: `retries` (`EVALKIT_RETRIES`, pydantic-ai's default
1) bounds a tool's and the output's retries, ending in `UnexpectedModelBehavior` (`failed`); a request
limit (`EVALKIT_REQUEST_LIMIT`, unset by default: the served-call budget is evalkit's) ends in
`UsageLimitExceeded` (`iteration_limit`). A mocked tool's error comes back as the tool's text, never as
an MCP error, so no retry is spent on it that evalkit's loop would not spend (docs/agents.md).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any


async def main() -> dict[str, Any]:
    from pydantic_ai import Agent, UnexpectedModelBehavior, UsageLimitExceeded
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    env = os.environ
    provider = OpenAIProvider(base_url=env["EVALKIT_MODEL_BASE_URL"], api_key=env["EVALKIT_API_KEY"])
    model = OpenAIChatModel(env["EVALKIT_MODEL"], provider=provider)
    retries = int(env["EVALKIT_RETRIES"]) if env.get("EVALKIT_RETRIES") else None
    agent: Any = Agent(
        model,
        instructions=env.get("EVALKIT_SYSTEM") or None,
        toolsets=[MCPToolset(env["EVALKIT_MCP_URL"])],
        retries=retries,
    )
    limit = env.get("EVALKIT_REQUEST_LIMIT")
    limits = UsageLimits(request_limit=int(limit)) if limit else UsageLimits(request_limit=None)
    try:
        result = await agent.run(env["EVALKIT_PROMPT"], usage_limits=limits)
    except UnexpectedModelBehavior as exc:
        return {"final": None, "ended": "failed", "reason": f"UnexpectedModelBehavior: {exc}"}
    except UsageLimitExceeded as exc:
        return {"final": None, "ended": "iteration_limit", "reason": f"UsageLimitExceeded: {exc}"}
    return {"final": str(result.output)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())), flush=True)
