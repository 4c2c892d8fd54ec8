"""Where evalkit's own copies of Forge's guards (retry_nudge, respond_tool, rescue_parse) differ from
Forge's code. Each difference docs/guards.md ("Forge") names is held here against forge-guardrails;
the tests skip where it is not installed (Python >= 3.12: bash scripts/install-forge.sh)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from evalkit.chat import ToolSpec
from evalkit.strategies.base import Retry, TurnView
from evalkit.strategies.forge import forge_unavailable
from evalkit.strategies.rescue_parse import rescue_calls
from evalkit.strategies.respond_tool import RESPOND_TOOL, RespondTool
from evalkit.strategies.retry_nudge import DEFAULT_NUDGE, RetryNudge
from tests.fakes import call, calls, text

MISSING = forge_unavailable()
if MISSING is None and version("forge-guardrails") != "0.10.0":
    MISSING = f"these differences are 0.10.0's; this is forge-guardrails {version('forge-guardrails')}"
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

FIND = ToolSpec(
    name="find", parameters={"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
)


def _guardrails(**options):  # type: ignore[no-untyped-def]
    from forge.guardrails import Guardrails

    return Guardrails(tool_names=["find"], terminal_tool=frozenset(), **options)


def _view() -> TurnView:
    return TurnView(messages=[], tools=[FIND], mode="native", supports=lambda feature: True, offered=[FIND])


def _text(content: str):  # type: ignore[no-untyped-def]
    from forge.core.workflow import TextResponse

    return TextResponse(content)


def _calls(*items: tuple[str, object]):  # type: ignore[no-untyped-def]
    from forge.core.workflow import ToolCall

    return [ToolCall(tool=name, args=args) for name, args in items]


def test_the_retry_nudge_is_a_paraphrase_not_forges_text() -> None:
    from forge.prompts.nudges import retry_nudge

    assert retry_nudge("") == (
        "Your previous response was not a valid tool call. You must respond with a tool call, not free text. "
        "Please try again with a valid tool call."
    )
    assert retry_nudge("") != DEFAULT_NUDGE


def test_forge_counts_consecutive_bad_replies_evalkit_counts_per_run() -> None:
    forge, ours = _guardrails(max_retries=2), RetryNudge(max_retries=2)
    actions, decisions = [], []
    for _ in range(3):  # text, then a good call, three times: never two bad replies in a row
        actions += [forge.check(_text("hmm")).action, forge.check(_calls(("find", {"who": "ann"}))).action]
        decisions += [
            type(ours.judge(text("hmm"), _view())).__name__,
            ours.judge(calls(call("find", who="ann")), _view()),
        ]
    assert actions == ["retry", "execute"] * 3
    assert decisions == ["Retry", None, "Retry", None, "NoneType", None]  # the third text is accepted


def test_at_the_end_of_the_budget_forge_declares_the_run_lost_evalkit_accepts_the_text() -> None:
    forge, ours = _guardrails(max_retries=1), RetryNudge(max_retries=1)
    assert [forge.check(_text("hi")).action for _ in range(2)] == ["retry", "fatal"]
    assert isinstance(ours.judge(text("hi"), _view()), Retry) and ours.judge(text("hi"), _view()) is None


def test_an_unknown_tool_is_rejected_by_forge_and_passed_on_by_evalkits_nudge() -> None:
    result = _guardrails().check(_calls(("lookup", {"who": "ann"})))
    assert (result.action, result.nudge.role) == ("tool_error", "tool")
    assert RetryNudge().judge(calls(call("lookup", who="ann")), _view()) is None  # executed: the mock answers an error


def test_neither_checks_arguments_against_the_tools_schema() -> None:
    assert _guardrails().check(_calls(("find", {}))).action == "execute"  # `who` is required
    assert RetryNudge().judge(calls(call("find")), _view()) is None


@pytest.mark.parametrize(
    ("reply", "forge_rescues", "evalkit_rescues"),
    [
        ('For example: {"name": "find", "arguments": {"who": "ann"}}', True, False),  # an example, to evalkit
        ('find[ARGS]{"who": "ann"}', True, False),  # Forge's rehearsal syntax
        ('[TOOL_CALLS]find{"who": "ann"}', True, False),  # Mistral's bracket tag
        ('find(who="ann")', False, True),  # a call written as code
        ('{"name": "find", "arguments": {"who": "ann"},}', False, True),  # a trailing comma
        ('<tool_call>{"name": "find", "arguments": {"who": "ann"}}</tool_call>', True, True),
        ("<function=find><parameter=who>ann</parameter></function>", True, True),
    ],
)
def test_rescue_parsing_reads_different_formats(reply: str, forge_rescues: bool, evalkit_rescues: bool) -> None:
    from forge.prompts.templates import rescue_tool_call

    assert bool(rescue_tool_call(reply, ["find"])) is forge_rescues
    assert (rescue_calls(reply, {"find": FIND}) is not None) is evalkit_rescues


def test_the_respond_tools_differ_in_description_and_in_a_call_without_a_message() -> None:
    from forge.tools.respond import RESPOND_DESCRIPTION, RESPOND_TOOL_NAME

    assert RESPOND_TOOL.name == RESPOND_TOOL_NAME and RESPOND_TOOL.description != RESPOND_DESCRIPTION
    # Forge's validator takes a respond call without `message` as valid (its proxy returns ""): evalkit's nudges
    from forge.guardrails import Guardrails

    forge = Guardrails(tool_names=["find", "respond"], terminal_tool="respond")
    assert forge.check(_calls(("respond", {"text": "hi"}))).action == "execute"
    assert isinstance(RespondTool().judge(calls(call("respond", text="hi")), _view()), Retry)
