"""What the loop offers a guard beyond a user nudge (for Forge's guardrails): a correction on the
tool-result channel, a rescue recorded as one, a `guard_fatal` stop, the scenario's terminal and
required tools in the view, and `after_execute` after each batch of calls."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import ClassVar

from evalkit.chat import Completion, ExecutedCall, Sampling
from evalkit.judge.verdict import judge_run
from evalkit.run.loop import run_loop
from evalkit.strategies.base import BaseStrategy, Decision, Execute, Retry, Stop, Strategy, TurnView
from tests.fakes import ScriptedBackend, call, calls, text
from tests.run.test_loop import CHAIN, NO_WAIT
from tests.run.test_loop import run as run_specs


@dataclass
class Scripted(BaseStrategy):
    """Hands the loop one scripted decision per reply; keeps what it was shown."""

    name: ClassVar[str] = "scripted"
    decisions: list[Decision | None] = field(default_factory=list)
    batches: list[list[ExecutedCall]] = field(default_factory=list)
    views: list[TurnView] = field(default_factory=list)

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        self.views.append(view)
        return self.decisions.pop(0)

    def after_execute(self, executed: list[ExecutedCall], view: TurnView) -> None:
        self.batches.append(list(executed))


def run(backend: ScriptedBackend, strategies: list[Strategy]):  # type: ignore[no-untyped-def]
    state, view = asyncio.run(
        run_loop(
            CHAIN, strategies, backend, mode="native", sampling=Sampling(seed=1), run_id="r", seed=1, policy=NO_WAIT
        )
    )
    return state, view, judge_run(CHAIN, state.outcome, view.executed, state.reply)


def test_a_tool_channel_retry_answers_each_rejected_call_with_the_message():
    guard = Scripted(decisions=[Retry("no such tool", "scripted", role="tool"), None, None])
    backend = ScriptedBackend(
        [
            calls(call("lookup", who="ann"), call("find", who="ann")),
            calls(call("find", who="ann")),
            calls(call("refund")),
        ]
    )
    state, view, _ = run(backend, [guard])
    sent = backend.requests[1].messages
    assistant, first, second = sent[-3:]
    assert assistant.role == "assistant" and [c.name for c in assistant.tool_calls] == ["lookup", "find"]
    assert [(m.role, m.content, m.tool_call_id, m.origin) for m in (first, second)] == [
        ("tool", "no such tool", assistant.tool_calls[0].id, "guard"),
        ("tool", "no such tool", assistant.tool_calls[1].id, "guard"),
    ]
    assert state.retries == 1 and [c.call.name for c in view.executed] == ["find", "refund"]  # the rejected never ran


def test_a_tool_channel_retry_of_a_text_reply_is_a_user_message():
    guard = Scripted(decisions=[Retry("call a tool", "scripted", role="tool"), Stop("failed", "enough")])
    backend = ScriptedBackend([text("hello"), text("hello")])
    run(backend, [guard])
    assert [(m.role, m.content) for m in backend.requests[1].messages[-2:]] == [
        ("assistant", "hello"),
        ("user", "call a tool"),
    ]


def test_the_default_retry_is_the_user_message_it_always_was():
    assert Retry("m", "r").role == "user"


def test_after_execute_sees_each_batch_and_the_view_names_terminal_and_required_tools():
    guard = Scripted(decisions=[None, None])
    backend = ScriptedBackend(
        [calls(call("find", who="ann"), call("find", who="bob")), calls(call("refund", order="O-1"))]
    )
    run(backend, [guard])
    assert [[(c.call.name, c.error is None) for c in batch] for batch in guard.batches] == [
        [("find", True), ("find", False)],  # bob has no mocked result
        [("refund", True)],
    ]
    assert guard.views[0].terminal_tool == "refund" and guard.views[0].required_tools == ("find", "refund")


def test_a_stack_without_after_execute_still_runs():
    @dataclass
    class Bare:  # a plugin that implements only the protocol's three methods
        name: ClassVar[str] = "bare"

        def requires(self, mode):  # type: ignore[no-untyped-def]
            return set()

        def prepare(self, request, view):  # type: ignore[no-untyped-def]
            return request

        def judge(self, reply, view):  # type: ignore[no-untyped-def]
            return None

    state, _, _ = run(ScriptedBackend([calls(call("find", who="ann")), calls(call("refund", order="O-1"))]), [Bare()])
    assert state.outcome == "terminal_tool"


def test_a_rescued_execute_is_recorded_as_a_rescue_and_a_strip_stays_a_strip():
    rescued = Execute([call("find", who="ann")], note="rescued find from text", rescued=True)
    stripped = Execute([call("refund", order="O-1")], note="dropped respond beside real calls")
    state, _, verdict = run(
        ScriptedBackend([text('{"name": "find"}'), calls(call("refund"))]), [Scripted([rescued, stripped])]
    )
    assert [(i.action, i.reason) for i in state.interventions] == [
        ("rescue", "rescued find from text"),
        ("strip", "dropped respond beside real calls"),
    ]
    assert verdict.correct


def test_a_guard_fatal_stop_is_its_own_outcome_and_failure_category():
    state, _, verdict = run(ScriptedBackend([text("hello")]), [Scripted([Stop("guard_fatal", "budget spent")])])
    assert state.outcome == "guard_fatal" and verdict.failure == "guard_fatal" and not verdict.completed


def test_every_existing_guard_still_retries_on_the_user_channel():
    for name in ("retry_nudge", "no_tools_guard", "respond_tool"):
        backend = ScriptedBackend(
            [text("I will look."), calls(call("find", who="ann")), calls(call("refund", order="O-1"))]
        )
        run_specs(backend, [name])
        nudged = [m for m in backend.requests[-1].messages if m.origin == "guard"]
        assert nudged and all(m.role == "user" for m in nudged), name
