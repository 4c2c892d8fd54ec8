"""`evalkit serve sim` streamed: every reply, streamed and not, held against the official SDKs' own types.

The references are the `openai` and `anthropic` packages: each unstreamed answer must validate
strictly as `ChatCompletion` / `anthropic.types.Message`, each streamed event as `ChatCompletionChunk` /
`RawMessageStreamEvent`, and what the SDK assembles from the stream (`client.chat.completions.stream`,
`client.messages.stream(...).get_final_message()`) must be the unstreamed answer: the same draw.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import TypeAdapter

from evalkit.backends.anthropic import anthropic_messages
from evalkit.backends.openai import chat_messages, chat_tools
from evalkit.backends.sim_server import SimServer
from evalkit.chat import ChatRequest, Message, ToolSpec
from evalkit.prompt_mode import apply_prompt_mode
from evalkit.scenario.model import Scenario, load_scenario, load_scenarios
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
FAMILIES = ["casual_greeting", "relevance_detection", "sequential_reasoning", "data_gap_recovery"]
PARALLEL = ROOT / "scenarios/bfcl-wide/parallel_multiple/bfcl-parallel-multiple-57.yaml"  # calls in one reply
SEEDS = range(3)
# every behaviour likely, so a few seeds meet them all (small-local's malformed calls are 1 in 20)
EVEN = """name: even
tool_step: {correct: 1, text_instead_of_tool: 1, malformed_call: 1, hallucinated_tool: 1, wrong_arguments: 1,
            premature_answer: 1}
reply_step: {unneeded_tool_call: 0.5, uses_respond: 0.5, wrong_reply: 0.3}
after_nudge: {tool_step_correct: 0.5, reply_step_tool_call: 0.5, uses_respond: 0.5, wrong_reply: 0.3}
prompt_mode_malformed: 0.3
"""
RESPOND = ToolSpec(
    name="respond",
    description="Reply to the user.",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
EVENT = TypeAdapter(RawMessageStreamEvent)


def _scenarios() -> list[Scenario]:
    paths = sorted(str(p) for family in FAMILIES for p in (ROOT / "scenarios" / family).glob("*.yaml"))
    return [*load_scenarios(paths), load_scenario(PARALLEL)]


def _requests(scenario: Scenario) -> Iterator[ChatRequest]:
    """The conversations a run meets: the opening, a guard's nudge, the first intended call's result;
    with the scenario's tools, with `respond` too, and in prompt mode."""
    tools = [ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in scenario.tools]
    opening = [Message(role="system", content=scenario.system), Message(role="user", content=scenario.user_text(0))]
    conversations = [
        opening,
        [*opening, Message(role="assistant", content="Let me see."), Message(role="user", content="Use a tool.")],
    ]
    if skill := scenario.skill().calls:
        called = Message(role="assistant", tool_calls=[skill[0]], origin="model")
        conversations.append([*opening, called, Message(role="tool", content="{}", tool_call_id=skill[0].id)])
    for messages in conversations:
        yield ChatRequest(messages=messages, tools=tools)
        yield ChatRequest(messages=messages, tools=[*tools, RESPOND])
        yield apply_prompt_mode(ChatRequest(messages=messages, tools=tools))


def openai_body(request: ChatRequest, seed: int, **extra: Any) -> dict[str, Any]:
    body = {"model": "small-local", "messages": chat_messages(request.messages), "seed": seed, **extra}
    return body | ({"tools": chat_tools(request.tools)} if request.tools else {})


def anthropic_body(request: ChatRequest, **extra: Any) -> dict[str, Any]:
    system, messages = anthropic_messages(request.messages)
    body = {"model": "small-local", "max_tokens": 256, "system": system, "messages": messages, **extra}
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
    return body | ({"tools": tools} if tools else {})


def sse(text: str) -> list[tuple[str | None, str]]:
    """(event name, data) of every event of a `text/event-stream` body."""
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields.get("event"), fields["data"]))
    return events


def openai_stream(client: httpx.Client, body: dict[str, Any], include_usage: bool) -> list[ChatCompletionChunk]:
    """The raw stream, each chunk validated strictly; it ends in `[DONE]` and, asked for, a usage chunk."""
    options = {"stream_options": {"include_usage": True}} if include_usage else {}
    answer = client.post("/v1/chat/completions", json={**body, "stream": True, **options})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    events = sse(answer.text)
    assert events[-1] == (None, "[DONE]")
    chunks = [ChatCompletionChunk.model_validate(json.loads(data), strict=True) for _, data in events[:-1]]
    assert all(c.created > 0 and c.object == "chat.completion.chunk" for c in chunks)
    if include_usage:
        assert chunks[-1].choices == [] and chunks[-1].usage is not None
        assert all(c.usage is None and len(c.choices) == 1 for c in chunks[:-1])
    else:
        assert all(c.usage is None and len(c.choices) == 1 for c in chunks)
    return chunks


def anthropic_stream(client: httpx.Client, body: dict[str, Any], seed: int) -> list[Any]:
    answer = client.post("/v1/messages", json={**body, "stream": True}, headers={"X-Evalkit-Seed": str(seed)})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
    events = []
    for name, data in sse(answer.text):
        event = EVENT.validate_python(json.loads(data), strict=True)
        assert name == event.type
        events.append(event)
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    assert events[-2].type == "message_delta"
    return events


def _openai_decision(completion: Any) -> tuple[Any, ...]:
    choice = completion.choices[0]
    calls = tuple((c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or [])
    usage = (completion.usage.prompt_tokens, completion.usage.completion_tokens) if completion.usage else None
    return completion.id, completion.created, choice.message.content or "", calls, choice.finish_reason, usage


def _anthropic_decision(message: Any) -> tuple[Any, ...]:
    blocks = tuple(
        (b.type, b.text) if b.type == "text" else (b.type, b.id, b.name, json.dumps(b.input)) for b in message.content
    )
    return message.id, blocks, message.stop_reason, message.usage.input_tokens, message.usage.output_tokens


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Scenario]]]:
    profile = tmp_path_factory.mktemp("profile") / "even.yaml"
    profile.write_text(EVEN, encoding="utf-8")
    scenarios = _scenarios()
    with sim_http(SimServer(str(profile), scenarios)) as url:
        yield url, scenarios


def test_every_openai_reply_streamed_and_not_is_the_sdk_s_type_and_the_same_draw(
    served: tuple[str, list[Scenario]],
) -> None:
    url, scenarios = served
    sdk = openai.OpenAI(base_url=url + "/v1", api_key="sim", max_retries=0)
    seen: set[str] = set()
    with httpx.Client(base_url=url, timeout=30) as client:
        for scenario in scenarios:
            for request in _requests(scenario):
                for seed in SEEDS:
                    body = openai_body(request, seed)
                    whole = ChatCompletion.model_validate(
                        client.post("/v1/chat/completions", json=body).json(), strict=True
                    )
                    chunks = openai_stream(client, body, include_usage=seed % 2 == 0)
                    assert {c.id for c in chunks} == {whole.id}
                    with sdk.chat.completions.stream(**body, stream_options={"include_usage": True}) as stream:
                        assembled = stream.get_final_completion()
                    assert _openai_decision(assembled) == _openai_decision(whole)
                    seen.add(_kind(whole))
    # the comparison is not vacuous: every kind of reply the simulated model gives went through it
    assert seen == {"text", "one call", "calls", "malformed call"}


def _kind(completion: ChatCompletion) -> str:
    calls = completion.choices[0].message.tool_calls or []
    if not calls:
        return "text"
    if any(_unparsed(c.function.arguments) for c in calls if c.type == "function"):
        return "malformed call"
    return "one call" if len(calls) == 1 else "calls"


def _unparsed(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except ValueError:
        return True
    return False


def test_every_anthropic_reply_streamed_and_not_is_the_sdk_s_type_and_the_same_draw(
    served: tuple[str, list[Scenario]],
) -> None:
    url, scenarios = served
    sdk = anthropic.Anthropic(base_url=url, api_key="sim", max_retries=0)
    seen: set[tuple[str, ...]] = set()
    with httpx.Client(base_url=url, timeout=30) as client:
        for scenario in scenarios:
            for request in _requests(scenario):
                for seed in SEEDS:
                    body, headers = anthropic_body(request), {"X-Evalkit-Seed": str(seed)}
                    raw = client.post("/v1/messages", json=body, headers=headers).json()
                    whole = AnthropicMessage.model_validate(raw, strict=True)
                    events = anthropic_stream(client, body, seed)
                    assert events[0].message.id == whole.id
                    with sdk.messages.stream(**body, extra_headers=headers) as stream:
                        assembled = stream.get_final_message()
                    assert _anthropic_decision(assembled) == _anthropic_decision(whole)
                    seen.add(tuple(b.type for b in whole.content))
    assert {("text",), ("tool_use",), ("tool_use", "tool_use")} <= seen
