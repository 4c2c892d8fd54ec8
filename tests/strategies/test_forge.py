"""The `forge` strategy held against Forge's own code: the same replies fed to
`forge.guardrails.Guardrails` directly and through the strategy give the same actions and nudges.

Tests that run Forge need Python >= 3.12 with forge-guardrails (bash scripts/install-forge.sh); they
skip elsewhere, saying why. Option checks and the refusal to run without Forge run on any Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.chat import ChatRequest, Completion, ExecutedCall, Message, ToolCall, ToolSpec
from evalkit.errors import ConfigError
from evalkit.strategies import build_stack
from evalkit.strategies.base import Accept, Decision, Execute, Retry, Stop, TurnView
from evalkit.strategies.forge import ForgeGuardrails, forge_unavailable
from tests.fakes import ScriptedBackend, call, calls, text
from tests.run.test_loop import run

MISSING = forge_unavailable()
needs_forge = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

FIND = ToolSpec(name="find", parameters={"type": "object", "properties": {"who": {"type": "string"}}})
REFUND = ToolSpec(name="refund", parameters={"type": "object", "properties": {"order": {"type": "string"}}})


# --- the options, on any Python ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"max_retries": -1}, "option max_retries must be an integer >= 0, not -1"),
        ({"max_tool_errors": "2"}, "option max_tool_errors must be an integer >= 0, not '2'"),
        ({"max_premature_attempts": True}, "option max_premature_attempts must be an integer >= 0, not True"),
        ({"rescue_enabled": "no"}, "option rescue_enabled must be true or false, not 'no'"),
        ({"respond_tool": 1}, "option respond_tool must be true or false, not 1"),
        ({"required_steps": "find"}, "option required_steps must be a list of tool names, not 'find'"),
        ({"retry_nudge": 3}, "option retry_nudge must be a string, not 3"),
    ],
)
def test_a_bad_option_is_named(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_stack([("forge", options)])
    assert str(caught.value) == f"strategy 'forge': {problem}"


def test_an_unknown_option_is_named_with_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"strategy 'forge': unknown option\(s\) \['retries'\]; it takes .*'max_retries'"
    ):
        build_stack([("forge", {"retries": 2})])


@pytest.mark.skipif(MISSING is None, reason="forge-guardrails is installed in this Python")
def test_without_forge_the_strategy_names_the_python_and_package_it_needs() -> None:
    with pytest.raises(ConfigError) as caught:
        build_stack([("forge", {})])
    assert str(caught.value) == MISSING
    assert "Python >= 3.12" in str(caught.value) and "forge-guardrails" in str(caught.value)
    assert "\n" not in str(caught.value)


# --- against Forge's own code ------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A reply as evalkit's backends hand it over, and as Forge's clients would hand it to Forge."""

    completion: Completion
    forge: Any  # a factory: () -> the LLMResponse Forge's client builds from the same wire reply
    succeeds: tuple[bool, ...] = ()  # per call, whether the mock answers without an error


def _forge_calls(*items: tuple[str, Any]) -> Any:
    def make() -> Any:
        from forge.core.workflow import ToolCall as ForgeCall

        return [ForgeCall(tool=name, args=args) for name, args in items]

    return make


def _forge_text(content: str) -> Any:
    def make() -> Any:
        from forge.core.workflow import TextResponse

        return TextResponse(content=content)

    return make


def _forge_has_tool_errors() -> bool:
    """From 0.7.4 Forge's clients keep arguments that do not parse (`decode_tool_args`) and its
    guardrails answer them, and unknown tools, with `tool_error` on the tool channel; before, its
    clients turned such a reply into text and an unknown tool got a user-role `retry`."""
    try:
        from forge.clients.base import decode_tool_args  # noqa: F401
    except ImportError:
        return False
    return True


def _forge_malformed(raw: str) -> Any:
    def make() -> Any:
        from forge.core.workflow import TextResponse
        from forge.core.workflow import ToolCall as ForgeCall

        return [ForgeCall(tool="find", args=raw)] if _forge_has_tool_errors() else TextResponse(content=raw)

    return make


REPLIES: dict[str, Reply] = {
    "text": Reply(text("Sure, let me check that."), _forge_text("Sure, let me check that.")),
    "rescuable": Reply(
        text('{"tool": "find", "args": {"who": "ann"}}'),
        _forge_text('{"tool": "find", "args": {"who": "ann"}}'),
        (True,),
    ),
    "find": Reply(calls(call("find", who="ann")), _forge_calls(("find", {"who": "ann"})), (True,)),
    "find_fails": Reply(calls(call("find", who="bob")), _forge_calls(("find", {"who": "bob"})), (False,)),
    "refund": Reply(calls(call("refund", order="O-1")), _forge_calls(("refund", {"order": "O-1"})), (True,)),
    "unknown": Reply(calls(call("lookup", who="ann")), _forge_calls(("lookup", {"who": "ann"}))),
    "malformed": Reply(
        calls(ToolCall(name="find", raw_arguments='{"who": "ann"', parse_error="invalid JSON")),
        _forge_malformed('{"who": "ann"'),  # Forge's client keeps JSON that does not parse as the string
    ),
    "two": Reply(
        calls(call("find", who="ann"), call("refund", order="O-1")),
        _forge_calls(("find", {"who": "ann"}), ("refund", {"order": "O-1"})),
        (True, True),
    ),
    "respond": Reply(
        calls(call("respond", message="Hello!")), _forge_calls(("respond", {"message": "Hello!"})), (True,)
    ),
}


def _view(tools: list[ToolSpec], terminal: str | None, required: tuple[str, ...]) -> TurnView:
    return TurnView(
        messages=[Message(role="user", content="refund ann's order")],
        tools=tools,
        mode="native",
        supports=lambda feature: True,
        terminal_tool=terminal,
        required_tools=required,
    )


def _as_seen(decision: Decision | None) -> tuple[Any, ...]:
    """What the strategy told the loop, in the terms the Forge side is written in."""
    if isinstance(decision, Execute):
        names = [c.name for c in decision.calls]
        assert "respond" not in names  # never run against the mocks; with real calls beside it, dropped
        return ("execute", names)
    if isinstance(decision, Accept):
        return ("execute", ["respond"])  # a lone respond call: Forge validated it; the proxy returns its text
    if isinstance(decision, Retry):
        return ("nudge", decision.message, decision.role)
    assert isinstance(decision, Stop) and decision.outcome == "guard_fatal", decision
    return ("fatal",)


def _forge_seen(result: Any) -> tuple[Any, ...]:
    """What Forge's own CheckResult says, through the documented mapping (docs/guards.md, "Forge")."""
    if result.action == "execute":
        return ("execute", [c.tool for c in result.tool_calls])
    if result.action == "fatal":
        return ("fatal",)
    expected_role = {"retry": "user", "tool_error": "tool", "step_blocked": "user"}[result.action]
    assert result.nudge.role == expected_role
    return ("nudge", result.nudge.content, result.nudge.role)


def _replay(sequence: list[str], options: dict[str, Any], workflow: str) -> tuple[list[Any], list[Any]]:
    from forge.guardrails import Guardrails

    respond = options.get("respond_tool", False)
    if workflow == "chain":  # the scenario's terminal tool and its check's required calls
        tools, terminal, required = [FIND, REFUND], "refund", ("find", "refund")
        direct_terminal, direct_steps = {"refund"}, ["find"]
    else:  # a greeting: tools, no terminal tool, nothing required
        tools, terminal, required = [FIND], None, ()
        direct_terminal, direct_steps = set(), []
    strategy = build_stack([("forge", options)])[0]
    view = _view(tools, terminal, required)
    view.offered = strategy.prepare(ChatRequest(messages=view.messages, tools=tools), view).tools
    names = [t.name for t in tools] + (["respond"] if respond else [])
    assert [t.name for t in view.offered] == names
    direct = Guardrails(
        tool_names=names,
        terminal_tool=frozenset(direct_terminal | ({"respond"} if respond else set())),
        required_steps=direct_steps,
        max_retries=options.get("max_retries", 3),
        max_tool_errors=options.get("max_tool_errors", 2),
        rescue_enabled=options.get("rescue_enabled", True),
        max_premature_attempts=options.get("max_premature_attempts", 3),
    )
    ours: list[Any] = []
    theirs: list[Any] = []
    for key in sequence:
        reply = REPLIES[key]
        decision = strategy.judge(reply.completion, view)
        result = direct.check(reply.forge())
        ours.append(_as_seen(decision))
        theirs.append(_forge_seen(result))
        if result.action == "fatal" or ours[-1] != theirs[-1]:
            break
        if result.action == "execute":
            ran = [c for c in result.tool_calls if c.tool != "respond"]
            succeeded = [c for c, ok in zip(ran, reply.succeeds or (True,) * len(ran), strict=False) if ok]
            if respond and [c.tool for c in result.tool_calls] == ["respond"]:
                succeeded = result.tool_calls  # the respond tool "ran": the proxy's answer
            done = direct.record([c.tool for c in succeeded])
            if isinstance(decision, Execute):
                assert [c.name for c in decision.calls] == [c.tool for c in ran]
                strategy.after_execute(
                    [
                        ExecutedCall(
                            call=c,
                            result={} if ok else None,
                            error=None if ok else "no data",
                            known_tool=True,
                            mutating=False,
                        )
                        for c, ok in zip(decision.calls, reply.succeeds or (True,) * len(decision.calls), strict=False)
                    ],
                    view,
                )
            if done:
                break
    return ours, theirs


@needs_forge
@settings(max_examples=300, deadline=None)
@given(
    sequence=st.lists(st.sampled_from(sorted(REPLIES)), min_size=1, max_size=10),
    options=st.fixed_dictionaries(
        {},
        optional={
            "max_retries": st.integers(0, 3),
            "max_tool_errors": st.integers(0, 2),
            "rescue_enabled": st.booleans(),
            "max_premature_attempts": st.integers(0, 3),
            "respond_tool": st.booleans(),
        },
    ),
    workflow=st.sampled_from(["chain", "greeting"]),
)
def test_the_strategy_decides_as_forge_decides(sequence: list[str], options: dict[str, Any], workflow: str) -> None:
    if not options.get("respond_tool"):
        sequence = [k for k in sequence if k != "respond"] or ["text"]
    ours, theirs = _replay(sequence, options, workflow)
    assert ours == theirs


@needs_forge
def test_the_replay_covers_every_action_forge_has() -> None:
    """The differential test above can see every action: one sequence reaches each of them."""
    if not _forge_has_tool_errors():
        pytest.skip("this forge-guardrails has no tool_error action (before 0.7.4)")
    ours, _ = _replay(["text", "unknown", "malformed", "refund", "rescuable", "refund"], {}, "chain")
    assert [o[0] for o in ours] == ["nudge", "nudge", "nudge", "nudge", "execute", "execute"]
    assert [o[2] for o in ours[:4]] == ["user", "tool", "tool", "user"]  # retry, tool_error x2, step_blocked
    ours, _ = _replay(["text"] * 5, {"max_retries": 2}, "greeting")
    assert ours[-1] == ("fatal",) and len(ours) == 3


# --- through evalkit's loop --------------------------------------------------------------------


def _run(script: list[Completion], options: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    backend = ScriptedBackend(list(script))
    state, view, _ = run(backend, [("forge", options or {})])
    return state, view, backend


@needs_forge
def test_forge_nudges_reach_the_model_on_their_own_channels() -> None:
    from forge.prompts.nudges import retry_nudge, step_nudge, unknown_tool_nudge

    if not _forge_has_tool_errors():
        pytest.skip("this forge-guardrails has no tool_error action (before 0.7.4)")

    script = [
        text("Let me think."),
        calls(call("lookup", who="ann")),
        calls(call("refund", order="O-1")),  # before the required `find`
        calls(call("find", who="ann")),
        calls(call("refund", order="O-1")),
    ]
    state, view, backend = _run(script)
    assert state.outcome == "terminal_tool" and state.retries == 3
    sent = backend.requests
    assert [(m.role, m.content) for m in sent[1].messages[-1:]] == [("user", retry_nudge(""))]
    unknown = sent[2].messages[-1]
    assert (unknown.role, unknown.content, unknown.origin) == (
        "tool",
        unknown_tool_nudge("lookup", ["find", "refund"]),
        "guard",
    )
    assert sent[2].messages[-2].tool_calls[0].id == unknown.tool_call_id
    assert (sent[3].messages[-1].role, sent[3].messages[-1].content) == ("user", step_nudge("refund", ["find"], tier=1))
    assert [c.call.name for c in view.executed] == ["find", "refund"]


@needs_forge
def test_a_call_forge_rescues_from_text_runs_and_is_recorded_as_a_rescue() -> None:
    state, view, _ = _run([text('{"tool": "find", "args": {"who": "ann"}}'), calls(call("refund", order="O-1"))])
    assert state.outcome == "terminal_tool"
    assert [(i.action, i.reason) for i in state.interventions] == [("rescue", "forge rescued find from text")]
    assert view.executed[0].call.arguments == {"who": "ann"}


@needs_forge
def test_a_spent_budget_ends_the_run_as_guard_fatal() -> None:
    state, _, _ = _run([text("a"), text("b")], {"max_retries": 1})
    assert state.outcome == "guard_fatal"
    assert state.interventions[-1].reason == "forge fatal: too many consecutive bad responses"


@needs_forge
def test_what_ran_is_recorded_so_the_terminal_call_is_allowed() -> None:
    # `find` for bob fails at the mock: Forge is not told it ran, so `refund` is still premature
    state, _, backend = _run(
        [
            calls(call("find", who="bob")),
            calls(call("refund", order="O-1")),
            calls(call("find", who="ann")),
            calls(call("refund", order="O-1")),
        ]
    )
    assert state.outcome == "terminal_tool" and state.retries == 1
    assert "You cannot call refund yet" in backend.requests[2].messages[-1].content


@needs_forge
def test_forge_rebuilt_for_new_tools_keeps_the_steps_that_ran() -> None:
    strategy = ForgeGuardrails()
    view = _view([FIND, REFUND], "refund", ("find", "refund"))
    view.offered = [FIND, REFUND]
    assert isinstance(strategy.judge(calls(call("find", who="ann")), view), Execute)
    strategy.after_execute([ExecutedCall(call("find", who="ann"), {}, None, True, False)], view)
    view.offered = [FIND, REFUND, ToolSpec(name="note")]  # a later turn adds a tool
    decision = strategy.judge(calls(call("refund", order="O-1")), view)
    assert isinstance(decision, Execute) and [c.name for c in decision.calls] == ["refund"]


@needs_forge
def test_a_lone_respond_call_is_the_answer_and_beside_real_calls_it_is_dropped() -> None:
    strategy = ForgeGuardrails(respond_tool=True)
    view = _view([FIND], None, ())
    view.offered = strategy.prepare(ChatRequest(messages=[], tools=[FIND]), view).tools
    assert [t.name for t in view.offered] == ["find", "respond"]
    assert strategy.judge(calls(call("respond", message="Hello!")), view) == Accept("Hello!")
    decision = strategy.judge(calls(call("respond", message="x"), call("find", who="ann")), view)
    assert decision == Execute([call("find", who="ann")], note="dropped respond beside real calls")


@needs_forge
def test_forge_offers_its_own_respond_tool() -> None:
    from forge.tools.respond import RESPOND_DESCRIPTION

    offered = ForgeGuardrails(respond_tool=True).prepare(
        ChatRequest(messages=[], tools=[FIND]), _view([FIND], None, ())
    )
    assert offered.tools[-1].description == RESPOND_DESCRIPTION
    assert offered.tools[-1].parameters["required"] == ["message"]


@needs_forge
def test_a_request_without_tools_is_not_judged() -> None:
    assert ForgeGuardrails().judge(text("hi"), _view([], None, ())) is None
