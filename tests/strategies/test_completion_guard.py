"""`completion_guard`: action turns end with work evidence or an explicit blocker, never fake progress."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Completion, ExecutedCall, Message, Sampling, ToolCall, ToolSpec
from evalkit.errors import ConfigError
from evalkit.run.loop import run_loop
from evalkit.scenario.model import load_scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import Retry, Stop, TurnView
from evalkit.strategies.completion_guard import (
    CORRECTIVE,
    CompletionGuard,
    classify_turn,
    has_blocker,
    is_action_request,
)
from tests.fakes import ScriptedBackend, call, calls, text

TOOLS = [ToolSpec(name="read_file"), ToolSpec(name="edit_file")]
FIX = "Fix the typo 'teh' in README.md."


def done(name: str, *, error: str | None = None, known: bool = True) -> ExecutedCall:
    return ExecutedCall(
        call=ToolCall(id="x", name=name, arguments={}),
        result=None if error else {"ok": True},
        error=error,
        known_tool=known,
        mutating=name == "edit_file",
    )


def view(
    request: str = FIX,
    work: list[ExecutedCall] | None = None,
    earlier: list[ExecutedCall] | None = None,
    mutating: frozenset[str] = frozenset({"edit_file"}),
) -> TurnView:
    """A view whose current turn executed `work`; `earlier` ran during a previous user turn."""
    messages: list[Message] = []
    for batch, user in ((earlier or [], "Read README.md"), (work or [], request)):
        messages.append(Message(role="user", content=user))
        messages += [Message(role="tool", content="{}", name=e.call.name) for e in batch]
    return TurnView(
        messages=messages,
        tools=TOOLS,
        mode="native",
        supports=lambda f: True,
        executed=[*(earlier or []), *(work or [])],
        mutating_tools=mutating,
    )


# --- the seed's unit tests -------------------------------------------------------------------------


def test_intent_without_mutation_or_blocker_is_insufficient() -> None:
    assert classify_turn("I'll implement this now.", []) == "insufficient_progress"
    assert classify_turn("Done!", [done("read_file")]) == "insufficient_progress"  # read-only loop


def test_intent_with_mutation_and_answer_is_completed_with_work() -> None:
    assert classify_turn("Fixed both typos.", [done("read_file"), done("edit_file")]) == "completed_with_work"
    assert classify_turn("   ", [done("edit_file")]) == "insufficient_progress"  # no final answer


def test_a_failed_mutation_needs_a_blocker() -> None:
    failed = [done("edit_file", error="permission denied")]
    assert classify_turn("Done, debug is now false.", failed) == "insufficient_progress"
    assert classify_turn("I cannot edit config/prod.yaml because it is read-only.", failed) == "completed_with_blocker"
    assert classify_turn("Edited.", [done("edit_file", known=False)]) == "insufficient_progress"


@pytest.mark.parametrize(
    "answer",
    [
        "I am blocked: config/prod.yaml is read-only. Please make it writable.",
        "I can't edit the file because the disk is full.",
        "I could not apply the change since the file is locked by another process.",
        "Unable to write README.md: the workspace is mounted read-only.",
        "Blocker: the edit tool returns permission denied for this path.",
        "Permission denied when writing config/prod.yaml; please grant write access.",
    ],
)
def test_explicit_blockers(answer: str) -> None:
    assert has_blocker(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "I'll implement this now.",
        "Done! The typo is fixed.",
        "Unable to.",  # no cause
        "I cannot wait to help!",  # "cannot" without a reason
        "Sure, working on it.",
        "",
    ],
)
def test_not_blockers(answer: str) -> None:
    assert not has_blocker(answer)


@pytest.mark.parametrize(
    "message, expected",
    [
        ("Fix the typo 'teh' in README.md.", True),
        ("Create utils/slug.py with a slugify function.", True),
        ("Set debug to false in config/prod.yaml.", True),
        ("Can you add a test for parse()?", True),
        ("Why does the build fail? Fix it.", True),  # analysis question plus an imperative
        ("Explain how to fix the typo.", False),
        ("What does the write_file tool do?", False),
        ("What is the capital of France?", False),
        ("hi", False),
        ("Thanks!", False),
    ],
)
def test_action_intent(message: str, expected: bool) -> None:
    assert is_action_request(message) is expected


# --- the guard's decisions ---------------------------------------------------------------------------


def test_fake_progress_is_retried_with_the_seed_message_then_fails() -> None:
    guard = CompletionGuard()
    first, second = guard.judge(text("I'll fix it."), view()), guard.judge(text("Working on it."), view())
    assert isinstance(first, Retry) and first.message == CORRECTIVE
    assert first.reason == "insufficient progress: no tool work and no blocker (retry 1/2)"
    assert isinstance(second, Retry) and "2/2" in second.reason
    assert guard.judge(text("Done."), view()) == Stop(
        "failed", "insufficient progress after 2 retries (no tool work and no blocker)"
    )


def test_reasons_name_what_was_missing() -> None:
    read_only = CompletionGuard().judge(text("Done."), view(work=[done("read_file")]))
    failed = CompletionGuard().judge(text("Done."), view(work=[done("edit_file", error="denied")]))
    assert isinstance(read_only, Retry) and "only read-only calls" in read_only.reason
    assert isinstance(failed, Retry) and "mutating call failed" in failed.reason


def test_work_and_blockers_pass_through() -> None:
    guard = CompletionGuard()
    assert guard.judge(text("Fixed 2 typos."), view(work=[done("read_file"), done("edit_file")])) is None
    assert guard.judge(text("I am blocked: README.md is read-only, please unlock it."), view()) is None
    assert guard.used == 0


def test_only_work_from_the_current_turn_counts() -> None:
    decision = CompletionGuard().judge(text("Fixed."), view(earlier=[done("edit_file")]))
    assert isinstance(decision, Retry)


def test_calls_in_progress_and_non_action_requests_pass_through() -> None:
    guard = CompletionGuard()
    assert guard.judge(calls(call("read_file", path="README.md")), view()) is None
    assert guard.judge(text("Hello!"), view(request="hi")) is None
    assert guard.judge(text("Paris."), view(request="What is the capital of France?")) is None


def test_without_mutating_tools_nothing_is_an_action_unless_configured() -> None:
    arithmetic = view(request="Add 5 and 7.", mutating=frozenset())
    assert CompletionGuard().judge(text("12"), arithmetic) is None
    assert isinstance(CompletionGuard(require_mutating_tool=False).judge(text("12"), arithmetic), Retry)


def test_a_lone_respond_call_is_the_final_answer() -> None:
    guard = CompletionGuard()
    fake = Completion(tool_calls=[ToolCall(name="respond", arguments={"message": "I'll do it."})])
    assert isinstance(guard.judge(fake, view()), Retry)
    honest = Completion(tool_calls=[ToolCall(name="respond", arguments={"message": "Done: fixed the typo."})])
    assert guard.judge(honest, view(work=[done("edit_file")])) is None


def test_the_budget_is_per_user_turn() -> None:
    guard = CompletionGuard(max_retries=1)
    assert isinstance(guard.judge(text("soon"), view()), Retry)
    later = view(request="Now fix the typo in docs.md.", earlier=[done("read_file")])
    assert isinstance(guard.judge(text("soon"), later), Retry)  # a new turn, a new budget
    assert isinstance(guard.judge(text("soon"), later), Stop)


def test_custom_keywords_and_patterns() -> None:
    guard = CompletionGuard(keywords=["deploy"], blocker_patterns=[r"\bno can do\b"])
    assert guard.judge(text("ok"), view(request="Fix the typo.")) is None  # not an action any more
    assert guard.judge(text("No can do: the cluster is down today."), view(request="Deploy it.")) is None
    assert isinstance(guard.judge(text("Deployed!"), view(request="Deploy it.")), Retry)


@pytest.mark.parametrize("options", [{"max_retries": -1}, {"blocker_patterns": ["(unclosed"]}, {"budget": 2}])
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        build_stack([("completion_guard", options)])


# --- in the loop, on the shipped action scenarios ----------------------------------------------------


def run(name: str, replies: list[Completion], stack: list[str] | None = None) -> Any:
    scenario = load_scenario(f"scenarios/action_completion/{name}.yaml")
    backend = ScriptedBackend(list(replies))
    specs: list[tuple[str, dict[str, Any]]] = [(s, {}) for s in stack or ["completion_guard"]]
    state, _ = asyncio.run(
        run_loop(
            scenario,
            build_stack(specs),
            backend,
            mode="native",
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )
    return state


def test_loop_fake_progress_ends_as_an_explicit_failure() -> None:
    state = run("fix_typo", [text("I'll fix it."), text("On it."), text("Fixed!")])
    assert state.outcome == "failed" and state.retries == 2
    assert [i.action for i in state.interventions] == ["retry", "retry", "stop"]


def test_loop_real_work_is_accepted() -> None:
    state = run(
        "fix_typo",
        [
            text("I'll fix it."),
            calls(call("edit_file", path="README.md", old="teh", new="the")),
            text("Fixed 2 typos."),
        ],
    )
    assert state.outcome == "final_answer" and state.reply == "Fixed 2 typos." and state.retries == 1


def test_loop_a_failed_edit_then_a_blocker_is_accepted() -> None:
    state = run(
        "readonly_config",
        [
            calls(call("edit_file", path="config/prod.yaml", old="debug: true", new="debug: false")),
            text("Done, debug is false now."),
            text("I cannot edit config/prod.yaml because it is read-only (permission denied)."),
        ],
    )
    assert state.outcome == "final_answer" and state.retries == 1 and "read-only" in (state.reply or "")


def test_loop_with_respond_tool_judges_the_respond_message() -> None:
    replies = [
        Completion(tool_calls=[ToolCall(name="respond", arguments={"message": "Will do!"})]),
        Completion(tool_calls=[ToolCall(name="respond", arguments={"message": "Still on it."})]),
        Completion(tool_calls=[ToolCall(name="respond", arguments={"message": "Done."})]),
    ]
    state = run("fix_typo", replies, stack=["completion_guard", "respond_tool"])
    assert state.outcome == "failed"
