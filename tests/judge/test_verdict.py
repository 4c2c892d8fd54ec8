"""Check items, completed vs correct, and the failure taxonomy."""

from __future__ import annotations

from typing import Any

from evalkit.judge.verdict import judge_run
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario
from tests.fakes import call

CHAIN = Scenario.model_validate(
    {
        "id": "c",
        "family": "sequential_reasoning",
        "turns": ["go"],
        "tools": [
            {"name": "find", "results": [{"when": {"who": "ann"}, "returns": {"order": "O-1"}}]},
            {"name": "report", "results": [{"returns": "ok"}]},
        ],
        "terminal_tool": "report",
        "reference": {"calls": [{"name": "find", "arguments": {"who": "ann"}}]},
        "check": {
            "calls": {"required": [{"name": "find", "arguments": {"who": "ann"}}]},
            "terminal": {"contains": {"text": ["O-1"]}},
        },
    }
)
GREETING = Scenario.model_validate(
    {
        "id": "g",
        "family": "casual_greeting",
        "turns": ["hi"],
        "tools": [{"name": "find"}],
        "reference": {"reply": "hello"},
        "check": {"no_tool_calls": True, "reply": {}},
    }
)
ASK = Scenario.model_validate(
    {
        "id": "a",
        "family": "data_gap_recovery",
        "turns": ["book it"],
        "tools": [{"name": "book"}],
        "reference": {"reply": "Which day?", "asks_user": True},
        "check": {"calls": {"forbidden": ["book"]}, "asks_user": {"mentions": ["day", "date"]}},
    }
)


def verdict(scenario: Scenario, outcome: str, *calls: Any, reply: str | None = None):  # type: ignore[no-untyped-def]
    executed = [execute_call(scenario, c) for c in calls]
    return judge_run(scenario, outcome, executed, reply)  # type: ignore[arg-type]


def test_correct_chain():
    v = verdict(CHAIN, "terminal_tool", call("find", who="Ann "), call("report", text="order O-1"))
    assert v.completed and v.correct and v.failure is None


def test_missing_fact_is_completed_but_wrong_arguments():
    v = verdict(CHAIN, "terminal_tool", call("find", who="ann"), call("report", text="done"))
    assert v.completed and not v.correct and v.failure == "wrong_arguments"


def test_text_without_any_call_is_text_instead_of_tool():
    v = verdict(CHAIN, "final_answer", reply="Let me check.")
    assert not v.completed and v.failure == "text_instead_of_tool"


def test_stopping_midway_is_premature_answer():
    v = verdict(CHAIN, "final_answer", call("find", who="ann"), reply="The order is O-1.")
    assert v.failure == "premature_answer"


def test_hallucinated_and_malformed_calls_are_named():
    assert verdict(CHAIN, "final_answer", call("search", q="ann"), reply="x").failure == "hallucinated_tool"
    broken = call("find").model_copy(update={"arguments": None, "raw_arguments": "{", "parse_error": "bad"})
    assert verdict(CHAIN, "final_answer", broken, reply="x").failure == "malformed_call"


def test_greeting_with_a_tool_call_is_unneeded_tool_call():
    assert verdict(GREETING, "final_answer", reply="Hello!").correct
    v = verdict(GREETING, "final_answer", call("find", who="x"), reply="Hello!")
    assert v.failure == "unneeded_tool_call" and not v.completed


def test_asking_the_user_for_the_missing_datum():
    assert verdict(ASK, "final_answer", reply="Sure, which day works for you?").correct
    assert verdict(ASK, "final_answer", reply="Booked for Monday.").failure == "text_instead_of_tool"
    assert verdict(ASK, "final_answer", call("book", day="mon"), reply="Done?").failure == "premature_answer"
    wrong = verdict(ASK, "final_answer", reply="Anything else?")
    assert wrong.completed and not wrong.correct and wrong.failure == "wrong_answer"


def test_limits_and_guards_name_themselves():
    assert verdict(CHAIN, "iteration_limit", call("find", who="x")).failure == "iteration_limit"
    assert verdict(CHAIN, "escalated").failure == "escalated"
    assert verdict(CHAIN, "infra_error").failure == "infra_error"
    assert verdict(CHAIN, "unsupported").failure is None


def test_a_call_whose_name_was_lost_is_malformed_and_an_invented_one_is_hallucinated():
    from evalkit.chat import UNKNOWN_TOOL_NAME, ToolCall

    lost = ToolCall(id="c", name=UNKNOWN_TOOL_NAME, raw_arguments="{", parse_error="llama-server: bad JSON")
    assert verdict(CHAIN, "final_answer", lost, reply="done").failure == "malformed_call"
    invented = ToolCall(id="c", name="lookup_everything", raw_arguments="{", parse_error="invalid JSON")
    assert verdict(CHAIN, "final_answer", invented, reply="done").failure == "hallucinated_tool"
