"""The agent loop against a scripted backend: execution, retries, limits, faults, prompt mode."""

from __future__ import annotations

import asyncio
from typing import Any

from evalkit.backends.base import RetryPolicy
from evalkit.chat import ChatRequest, Completion, Sampling
from evalkit.errors import BackendError
from evalkit.judge.verdict import judge_run
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from tests.fakes import ScriptedBackend, call, calls, text

CHAIN = Scenario.model_validate(
    {
        "id": "chain",
        "family": "sequential_reasoning",
        "turns": ["find the order of ann"],
        "max_iterations": 6,
        "tools": [
            {"name": "find", "results": [{"when": {"who": "ann"}, "returns": {"order": "O-1"}}]},
            {"name": "refund", "results": [{"returns": {"ok": True}}]},
        ],
        "terminal_tool": "refund",
        "reference": {
            "calls": [{"name": "find", "arguments": {"who": "ann"}}, {"name": "refund", "arguments": {"order": "O-1"}}]
        },
        "check": {
            "calls": {
                "required": [
                    {"name": "find", "arguments": {"who": "ann"}},
                    {"name": "refund", "arguments": {"order": "O-1"}},
                ]
            }
        },
    }
)

NO_WAIT = RetryPolicy(attempts=3, base_delay_s=0, max_delay_s=0)


def run(backend: ScriptedBackend, stack: list[Any], mode: str = "native", scenario: Scenario = CHAIN):  # type: ignore[no-untyped-def]
    specs = [(s, {}) if isinstance(s, str) else s for s in stack]
    state, view = asyncio.run(
        run_loop(
            scenario,
            build_stack(specs),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(seed=1),
            run_id="r",
            seed=1,
            policy=NO_WAIT,
        )
    )
    return state, view, judge_run(scenario, state.outcome, view.executed, state.reply)


def test_a_clean_chain_reaches_the_terminal_tool():
    backend = ScriptedBackend([calls(call("find", who="ann")), calls(call("refund", order="O-1"))])
    state, view, verdict = run(backend, ["trust_text"])
    assert state.outcome == "terminal_tool" and verdict.correct and verdict.completed
    tool_results = [m.content for m in view.messages if m.role == "tool"]
    assert tool_results == ['{"order": "O-1"}', '{"ok": true}']


def test_trust_text_ends_on_prose():
    state, _, verdict = run(ScriptedBackend([text("I'll look it up.")]), ["trust_text"])
    assert state.outcome == "final_answer" and not verdict.completed
    assert verdict.failure == "text_instead_of_tool"


def test_retry_nudge_appends_the_reply_and_a_guard_message():
    backend = ScriptedBackend(
        [text("I'll look it up."), calls(call("find", who="ann")), calls(call("refund", order="O-1"))]
    )
    state, _, verdict = run(backend, ["retry_nudge"])
    assert verdict.correct and state.retries == 1
    nudge = backend.requests[1].messages[-1]
    assert nudge.origin == "guard" and nudge.role == "user"
    assert [i.action for i in state.interventions] == ["retry"]


def test_iteration_limit():
    state, _, verdict = run(ScriptedBackend([calls(call("find", who="bob"))] * 6), ["trust_text"])
    assert state.outcome == "iteration_limit" and verdict.failure == "iteration_limit"


def test_hallucinated_and_malformed_calls_get_error_results():
    bad_json = Completion(
        tool_calls=[
            call("find").model_copy(update={"arguments": None, "raw_arguments": "{", "parse_error": "invalid JSON"})
        ]
    )
    backend = ScriptedBackend([calls(call("lookup", who="ann")), bad_json, text("done")])
    _, view, verdict = run(backend, ["trust_text"])
    errors = [m.content for m in view.messages if m.role == "tool"]
    assert "unknown tool 'lookup'" in errors[0] and "not valid JSON" in errors[1]
    assert verdict.failure == "hallucinated_tool"


def test_retryable_faults_are_retried_then_recorded_as_infra_error():
    flaky = ScriptedBackend(
        [BackendError("503", retryable=True), calls(call("find", who="ann")), calls(call("refund", order="O-1"))]
    )
    state, _, verdict = run(flaky, ["trust_text"])
    assert verdict.correct and state.calls[0].backend_retries == 1
    down = ScriptedBackend([BackendError("connection refused", retryable=True)] * 3)
    state, _, verdict = run(down, ["trust_text"])
    assert state.outcome == "infra_error" and "connection refused" in (state.error or "")
    assert verdict.failure == "infra_error" and not verdict.completed


def test_client_errors_are_not_retried():
    state, _, _ = run(ScriptedBackend([BackendError("400 bad request", retryable=False)]), ["trust_text"])
    assert state.outcome == "infra_error"


def test_missing_feature_makes_the_cell_unsupported():
    state, _, verdict = run(ScriptedBackend([], lacks={"native_tools"}), ["trust_text"])
    assert state.outcome == "unsupported" and "native_tools" in (state.error or "")
    assert verdict.failure is None


def test_prompt_mode_moves_tools_into_the_prompt_and_parses_calls():
    def answer(request: ChatRequest) -> Completion:
        assert request.tools == [] and "find" in request.messages[0].content
        return text('{"name": "find", "arguments": {"who": "ann"}}')

    tagged = text('<tool_call>{"name": "refund", "arguments": {"order": "O-1"}}</tool_call>')
    backend = ScriptedBackend([answer, tagged])
    state, _, verdict = run(backend, ["trust_text"], mode="prompt")
    assert verdict.correct and state.outcome == "terminal_tool"


def test_respond_stack_greeting_counts_no_tool_call():
    greet = Scenario.model_validate(
        {
            "id": "hi",
            "family": "casual_greeting",
            "turns": ["hi"],
            "tools": [{"name": "find"}],
            "reference": {"reply": "Hello"},
            "check": {"no_tool_calls": True, "reply": {}},
        }
    )
    state, view, verdict = run(
        ScriptedBackend([calls(call("respond", message="Hello!"))]), ["respond_tool"], scenario=greet
    )
    assert verdict.correct and state.reply == "Hello!" and view.executed == []
