"""The simulated backend reacts to the request and never reads the check."""

from __future__ import annotations

import asyncio
import json

from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim import SimulatedBackend
from evalkit.chat import CallContext, ChatRequest, Constraint, Message, Skill, ToolSpec
from tests.fakes import call

TOOLS = [ToolSpec(name="get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}})]
SKILL = Skill(calls=[call("get_weather", city="Oslo")], reply="It is cold.")


def sim(profile: str = "small-local") -> SimulatedBackend:
    return SimulatedBackend(entry=BackendEntry(label="s", kind="sim", model=profile))


def ask(backend: SimulatedBackend, seed: int, *, messages=None, constraint=None, tools=TOOLS, mode="native"):  # type: ignore[no-untyped-def]
    request = ChatRequest(
        messages=messages or [Message(role="user", content="weather in Oslo?")],
        tools=tools if mode == "native" else [],
        constraint=constraint,
    )
    context = CallContext(run_id="r", seed=seed, call_index=0, mode=mode, offered_tools=tools, skill=SKILL)
    return asyncio.run(backend.complete(request, context))


def test_deterministic_per_seed():
    backend = sim()
    assert [ask(backend, s) for s in range(20)] == [ask(backend, s) for s in range(20)]


def test_grammar_removes_format_errors_and_prose():
    backend = sim()
    constrained = Constraint(kind="grammar", grammar="root ::= x")
    replies = [ask(backend, s, constraint=constrained, mode="prompt") for s in range(300)]
    assert all(r.text.startswith('{"name": "get_weather", "arguments": {') for r in replies)
    assert all(json.loads(r.text) for r in replies)


def test_small_model_sometimes_answers_in_prose_strong_rarely():
    prose_small = sum(not ask(sim(), s).tool_calls for s in range(400))
    prose_strong = sum(not ask(sim("strong"), s).tool_calls for s in range(400))
    assert prose_small > 4 * prose_strong > 0 or prose_strong == 0 < prose_small


def test_after_the_work_it_replies_and_nudges_push_tool_calls_on_small_talk():
    done = [
        Message(role="user", content="weather?"),
        Message(role="assistant", tool_calls=[call("get_weather", city="Oslo")]),
        Message(role="tool", content="{}", name="get_weather"),
    ]
    replies = [ask(sim(), s, messages=done) for s in range(200)]
    assert sum(r.text == "It is cold." for r in replies) > 150
    nudged = [
        *done,
        Message(role="assistant", content="It is cold."),
        Message(role="user", content="call a tool!", origin="guard"),
    ]
    pushed = sum(bool(ask(sim(), s, messages=nudged).tool_calls) for s in range(200))
    assert pushed > 60  # a nudge after the answer pushes the small model into an unneeded call
