"""A streaming agent's calls through the counting pass-through in front of the real llama-server
(SmolLM2), counted with their tokens: the reference is the usage llama-server itself streams."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import openai
import pytest

from evalkit.backends.passthrough import CountingPassThrough, ServedCount
from evalkit.backends.serve import LlamaServer

pytestmark = pytest.mark.server

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


async def _streamed(url: str) -> tuple[list[Any], list[ServedCount]]:
    """Two streamed calls as an agent sends them (Cline asks for the usage chunk; many clients do not),
    and the pass-through's count after each."""
    body: dict[str, Any] = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
        "tools": TOOLS,
        "max_tokens": 24,
        "temperature": 0,
        "seed": 1,
    }
    answers, counts = [], []
    async with aiohttp.ClientSession() as session:
        passthrough = CountingPassThrough(url, session)
        await passthrough.start()
        try:
            async with openai.AsyncOpenAI(base_url=passthrough.url + "/v1", api_key="x", max_retries=0) as client:
                for extra in ({"stream_options": {"include_usage": True}}, {}):
                    async with client.chat.completions.stream(**body, **extra) as stream:
                        answers.append(await stream.get_final_completion())
                    counts.append(passthrough.count.snapshot())
        finally:
            await passthrough.stop()
    return answers, counts


def test_a_streaming_client_in_front_of_llama_server_is_counted(llama_server: LlamaServer) -> None:
    (asked, unasked), (first, both) = asyncio.run(_streamed(llama_server.url))
    usage = asked.usage
    assert usage is not None and usage.completion_tokens > 0
    assert (first.calls, first.errors, first.no_usage) == (1, 0, 0)
    assert (first.prompt_tokens, first.completion_tokens) == (usage.prompt_tokens, usage.completion_tokens)
    second = both.minus(first)
    # without the usage chunk the tokens come from llama-server's `timings` (the prompt now mostly
    # served from its cache): the same counts for the same greedy answer
    assert (second.calls, second.errors, second.no_usage) == (1, 0, 0)
    assert (second.prompt_tokens, second.completion_tokens) == (usage.prompt_tokens, usage.completion_tokens)
    assert _decision(unasked) == _decision(asked)


def _decision(completion: Any) -> tuple[Any, ...]:
    """The text and calls (a call's id is drawn afresh by llama-server each time)."""
    message = completion.choices[0].message
    return message.content, [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
