"""Each core guard's decisions, judged on hand-made replies."""

from __future__ import annotations

import pytest

from evalkit.chat import ChatRequest, Message, ToolSpec
from evalkit.errors import ConfigError
from evalkit.strategies import build_stack
from evalkit.strategies.base import Accept, Execute, Retry, Stop, TurnView
from evalkit.strategies.no_tools_guard import NoToolsGuard
from evalkit.strategies.respond_tool import RespondTool
from evalkit.strategies.retry_nudge import RetryNudge
from evalkit.strategies.trust_text import TrustText
from tests.fakes import call, calls, text

TOOLS = [ToolSpec(name="get_weather")]


def view(tools: list[ToolSpec] | None = None) -> TurnView:
    return TurnView(
        messages=[Message(role="user", content="hi")],
        tools=TOOLS if tools is None else tools,
        mode="native",
        supports=lambda feature: True,
    )


def test_trust_text_accepts_text_and_executes_calls():
    assert TrustText().judge(text("hello"), view()) == Accept("hello")
    assert isinstance(TrustText().judge(calls(call("get_weather", city="Oslo")), view()), Execute)


def test_retry_nudge_nudges_text_until_budget_then_accepts():
    guard = RetryNudge(max_retries=2)
    first, second = guard.judge(text("hi"), view()), guard.judge(text("hi"), view())
    assert isinstance(first, Retry) and isinstance(second, Retry) and "2/2" in second.reason
    assert guard.judge(text("hi"), view()) is None  # falls through: the text is accepted


def test_retry_nudge_can_fail_explicitly_when_exhausted():
    guard = RetryNudge(max_retries=1, on_exhausted="fail")
    guard.judge(text("x"), view())
    assert guard.judge(text("x"), view()) == Stop("failed", "still text after 1 nudges")


def test_retry_nudge_ignores_calls_and_tool_less_turns():
    guard = RetryNudge()
    assert guard.judge(calls(call("get_weather")), view()) is None
    assert guard.judge(text("hi"), view(tools=[])) is None
    assert guard.used == 0


def test_no_tools_guard_escalates_at_limit_and_resets_on_a_call():
    guard = NoToolsGuard(limit=3)
    assert isinstance(guard.judge(text("a"), view()), Retry)
    assert isinstance(guard.judge(text("b"), view()), Retry)
    assert guard.judge(calls(call("get_weather")), view()) is None and guard.mistakes == 0
    guard.judge(text("c"), view())
    guard.judge(text("d"), view())
    decision = guard.judge(text("e"), view())
    assert isinstance(decision, Stop) and decision.outcome == "escalated"


def test_no_tools_guard_message_is_clines():
    decision = NoToolsGuard().judge(text("a"), view())
    assert isinstance(decision, Retry) and decision.message.startswith("[ERROR] You did not use a tool")


def test_respond_tool_adds_the_tool_once():
    guard = RespondTool()
    request = guard.prepare(ChatRequest(messages=[], tools=TOOLS), view())
    again = guard.prepare(request, view())
    assert [t.name for t in again.tools] == ["get_weather", "respond"]
    assert guard.prepare(ChatRequest(messages=[]), view(tools=[])).tools == []


def test_respond_call_is_the_answer_and_never_a_tool_call():
    assert RespondTool().judge(calls(call("respond", message="Hi!")), view()) == Accept("Hi!")


def test_respond_beside_real_calls_is_dropped():
    decision = RespondTool().judge(calls(call("respond", message="x"), call("get_weather", city="Oslo")), view())
    assert isinstance(decision, Execute) and [c.name for c in decision.calls] == ["get_weather"]
    assert decision.note == "dropped respond beside real calls"


def test_respond_tool_nudges_bare_text_then_gives_up():
    guard = RespondTool(max_nudges=1)
    assert isinstance(guard.judge(text("hello"), view()), Retry)
    assert guard.judge(text("hello"), view()) is None


def test_respond_without_message_is_nudged():
    decision = RespondTool().judge(calls(call("respond", text="wrong key")), view())
    assert isinstance(decision, Retry) and "without a readable message" in decision.reason


def test_stack_from_specs_and_option_errors():
    stack = build_stack([("respond_tool", {}), ("retry_nudge", {"max_retries": 5})])
    assert [s.name for s in stack] == ["respond_tool", "retry_nudge"]
    with pytest.raises(ConfigError, match="unknown option"):
        build_stack([("retry_nudge", {"retries": 5})])
    with pytest.raises(ConfigError, match="unknown strategy 'nudge_harder'"):
        build_stack([("nudge_harder", {})])
    with pytest.raises(ConfigError, match="max_retries must be >= 0"):
        build_stack([("retry_nudge", {"max_retries": -1})])
