"""Call assignment and degenerate replies, each with the input that found it (more in
tests/scenario/test_matching.py and tests/scenario/test_argument_specs.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Completion, Sampling, ToolCall
from evalkit.judge.verdict import judge_run
from evalkit.run.loop import run_loop
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from tests.fakes import ScriptedBackend, call, calls

GREETING = Scenario.model_validate(
    {
        "id": "hi",
        "family": "casual_greeting",
        "turns": ["hi"],
        "max_iterations": 6,
        "tools": [
            {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
        ],
        "reference": {"reply": "Hello!"},
        "check": {"no_tool_calls": True, "reply": {}},
    }
)
TWICE = Scenario.model_validate(
    {
        "id": "twice",
        "family": "sequential_reasoning",
        "turns": ["weather in Paris and Lyon?"],
        "tools": [{"name": "get_weather", "results": [{"returns": {"sky": "clear"}}]}],
        "reference": {
            "calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "get_weather", "arguments": {"city": "Lyon"}},
            ],
            "reply": "Clear.",
        },
        "check": {
            "calls": {"order": "unordered", "required": [{"name": "get_weather"}, {"name": "get_weather"}]},
            "reply": {},
        },
    }
)
ROOT = Scenario.model_validate(
    {
        "id": "sqrt",
        "family": "relevance_detection",
        "turns": ["What is the square root of 144?"],
        "max_iterations": 3,
        "tools": [{"name": "book_hotel"}],
        "reference": {"reply": "12"},
        "check": {"no_tool_calls": True, "reply": {"contains": ["12"]}},
    }
)
NO_WAIT = RetryPolicy(attempts=1, base_delay_s=0, max_delay_s=0)


def run(scenario: Scenario, script: list[Any], stack: list[Any]):  # type: ignore[no-untyped-def]
    specs = [(s, {}) if isinstance(s, str) else s for s in stack]
    state, view = asyncio.run(
        run_loop(
            scenario,
            build_stack(specs),
            ScriptedBackend(script),
            mode="native",
            sampling=Sampling(seed=1),
            run_id="r",
            seed=1,
            policy=NO_WAIT,
        )
    )
    return state, judge_run(scenario, state.outcome, view.executed, state.reply)


def broken_respond(raw: str) -> Completion:
    return calls(ToolCall(id="c", name="respond", raw_arguments=raw, parse_error="invalid JSON"))


def test_1_an_unparseable_respond_after_the_nudges_is_the_reply_not_an_unknown_tool() -> None:
    script = [broken_respond('{"message": "Hello! How can I help')] * 2
    state, verdict = run(GREETING, script, [("respond_tool", {"max_nudges": 1})])
    assert state.outcome == "final_answer" and state.reply == "Hello! How can I help"
    assert verdict.correct and not any(i.item == "no tool calls" and not i.passed for i in verdict.items)
    debris = [broken_respond('{"message": "<|im_end|>\\n<|im_start|>user')] * 2
    state, verdict = run(GREETING, debris, [("respond_tool", {"max_nudges": 1})])
    assert verdict.failure == "degenerate_output" and state.interventions[-1].action == "accept"


def test_2_one_call_cannot_satisfy_two_required_entries() -> None:
    once = [execute_call(TWICE, call("get_weather", city="Paris"))]
    verdict = judge_run(TWICE, "final_answer", once, "Clear.")
    assert not verdict.correct and [i.passed for i in verdict.items][:2] == [True, False]
    both = [*once, execute_call(TWICE, call("get_weather", city="Lyon"))]
    assert judge_run(TWICE, "final_answer", both, "Clear.").correct


def test_2_unordered_matching_prefers_the_assignment_that_satisfies_every_argument() -> None:
    scenario = TWICE.model_copy(
        update={
            "check": TWICE.check.model_copy(
                update={
                    "calls": TWICE.check.calls.model_copy(
                        update={
                            "required": [
                                TWICE.check.calls.required[0],  # type: ignore[union-attr]
                                TWICE.check.calls.required[0].model_copy(update={"arguments": {"city": "paris"}}),
                            ]
                        }
                    )
                }
            )
        }
    )
    executed = [
        execute_call(scenario, call("get_weather", city="Paris")),
        execute_call(scenario, call("get_weather", city="Lyon")),
    ]
    assert judge_run(scenario, "final_answer", executed, "Clear.").correct


def test_8_a_relevance_run_looping_on_an_offered_tool_is_an_unneeded_tool_call() -> None:
    state, verdict = run(ROOT, [calls(call("book_hotel", city="Paris"))] * 3, [])
    assert state.outcome == "iteration_limit" and verdict.failure == "unneeded_tool_call"


def test_a_greeting_passes_only_with_a_real_reply() -> None:
    assert judge_run(GREETING, "final_answer", [], "Hello! How can I help?").correct
    gemma = "<|im_end|>\n<|im_start|>user|\n<|im_end|>\n<|im_start|>assistant|\n<|im_end|>\n"
    verdict = judge_run(GREETING, "final_answer", [], gemma)
    assert verdict.failure == "degenerate_output" and not verdict.completed
    item = next(i for i in verdict.items if i.item == "reply is not degenerate")
    assert "control tokens" in item.detail
