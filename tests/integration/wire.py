"""Requests the integration tests (and the payload capture script) send to the real llama-server.

SmolLM2-135M never starts a native call by itself (measured: with tools offered it answers in prose,
and `tool_choice: "required"` lets it write prose until the token limit, because llama.cpp's grammar
for `required` allows text before the first `<tool_call>`). To exercise the server's native tool-call
parser with the project's template, `native_call_messages` ends with an assistant prefill of
`<tool_call>`: llama-server continues that message, and at temperature 0 the model completes one
call. That tests the plumbing (template, parser, normalisation), not the model's judgement.
"""

from __future__ import annotations

from typing import Any

from evalkit.chat import ToolSpec
from evalkit.prompt_mode import render_tool_prompt
from evalkit.strategies.gbnf import tool_call_grammar, tool_call_schema

__all__ = [
    "GET_WEATHER",
    "RESPOND",
    "TOOLS",
    "body",
    "grammar_body",
    "json_schema_body",
    "native_call_messages",
    "openai_tools",
]

GET_WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
    },
)
RESPOND = ToolSpec(
    name="respond",
    description="Reply to the user in plain text when no other tool fits.",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
TOOLS = [GET_WEATHER, RESPOND]
WEATHER_QUESTION = "What is the weather in Paris?"


def openai_tools(tools: list[ToolSpec] = TOOLS) -> list[dict[str, Any]]:
    return [t.openai_schema() for t in tools]


def body(
    messages: list[dict[str, Any]], *, max_tokens: int = 48, seed: int = 1, temperature: float = 0.0, **extra: Any
) -> dict[str, Any]:
    """A /v1/chat/completions body: greedy by default, short, seeded. No prompt cache: a prefix reused
    from an earlier request in the same slot is computed in another batch shape, which can flip a greedy
    token (seen once under load: a parsed call that ran on to `length`)."""
    return {
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "seed": seed,
        "cache_prompt": False,
        **extra,
    }


def native_call_messages(question: str = WEATHER_QUESTION) -> list[dict[str, Any]]:
    return [{"role": "user", "content": question}, {"role": "assistant", "content": "<tool_call>"}]


def _prompt_mode_messages(question: str, tools: list[ToolSpec]) -> list[dict[str, Any]]:
    # the harness's prompt mode: tools described in the system prompt, no tool API fields
    return [{"role": "system", "content": render_tool_prompt(tools)}, {"role": "user", "content": question}]


def json_schema_body(question: str = WEATHER_QUESTION, tools: list[ToolSpec] = TOOLS) -> dict[str, Any]:
    schema = tool_call_schema(tools, max_string_chars=60)
    return body(_prompt_mode_messages(question, tools), max_tokens=64, json_schema=schema)


def grammar_body(question: str = WEATHER_QUESTION, tools: list[ToolSpec] = TOOLS) -> dict[str, Any]:
    grammar = tool_call_grammar(tools, max_string_chars=60)
    return body(_prompt_mode_messages(question, tools), max_tokens=64, grammar=grammar)
