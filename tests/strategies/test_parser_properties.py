"""Property tests for the two parsers that read model output: prompt mode's strict parser and the
`rescue_parse` guard. Random and adversarial text never raises, never hangs, and a call written in
the format a parser reads comes back as the same call.

"Never hangs" is checked with a generous watchdog (`bounded`): it catches runaway backtracking or a
quadratic scan, which take minutes on these sizes, and says nothing about speed.
The regression tests below hold the inputs that broke the parsers before.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evalkit.chat import ChatRequest, Message, ToolCall, ToolSpec, parse_arguments
from evalkit.prompt_mode import apply_prompt_mode, parse_strict_calls
from evalkit.strategies.rescue_parse import rescue_calls

WATCHDOG_S = 20

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SEARCH = ToolSpec(
    name="search",
    description="Search.",
    parameters={
        "type": "object",
        "required": ["query"],
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    },
)
TOOLS = {t.name: t for t in (WEATHER, SEARCH)}
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Hang(Exception):
    pass


@contextmanager
def bounded(seconds: int = WATCHDOG_S) -> Iterator[None]:
    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"still parsing after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def parse_both(text: str) -> tuple[list[ToolCall], tuple[list[ToolCall], str] | None]:
    with bounded():
        return parse_strict_calls(text), rescue_calls(text, TOOLS)


# fragments that steer random text into the parsers' interesting paths
FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    ",",
    ":",
    "\\",
    " ",
    "\n",
    '"name"',
    '"arguments"',
    '"city"',
    '"Paris"',
    "get_weather",
    "search",
    "get_weather(",
    "city=",
    "<tool_call>",
    "</tool_call>",
    "<function_call>",
    "<function=get_weather>",
    "</function>",
    '<invoke name="search">',
    "</invoke>",
    "<parameter=city>",
    '<parameter name="query">',
    "</parameter>",
    "```",
    "```json\n",
    "for example ",
    "True",
    "null",
    "1e999",
    "9" * 50,
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
]
adversarial = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=8), max_size=300).map("".join)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
arguments = st.dictionaries(st.text(max_size=12), json_values, max_size=5)


# -- never raise, never hang ----------------------------------------------------------------------------


@SETTINGS
@given(st.text(max_size=2000))
def test_any_text_parses_without_raising(text: str) -> None:
    parse_both(text)


@SETTINGS
@given(adversarial)
def test_adversarial_text_parses_without_raising_and_rescues_only_offered_tools(text: str) -> None:
    strict, rescued = parse_both(text)
    assert all(isinstance(c, ToolCall) for c in strict)
    if rescued is not None:
        calls, _ = rescued
        assert calls and all(c.name in TOOLS and isinstance(c.arguments, dict) for c in calls)
        json.dumps([c.arguments for c in calls], allow_nan=False)  # every rescued argument can be stored


@SETTINGS
@given(st.sampled_from(FRAGMENTS), st.integers(1, 4000))
def test_one_fragment_repeated_thousands_of_times_parses_in_bounded_time(fragment: str, times: int) -> None:
    parse_both(fragment * times)


@SETTINGS
@given(st.text(max_size=200))
def test_argument_text_parses_to_an_object_or_a_reason(raw: str) -> None:
    value, error = parse_arguments(raw)
    assert (value is None) != (error is None) or raw == ""


# -- round trips ----------------------------------------------------------------------------------------


@SETTINGS
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20), arguments), min_size=1, max_size=3))
def test_calls_rendered_in_the_prompt_mode_format_parse_back_to_the_same_calls(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    sent = [ToolCall(id=f"call_{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    request = ChatRequest(
        messages=[Message(role="user", content="go"), Message(role="assistant", content="", tool_calls=sent)],
        tools=[WEATHER],
    )
    rendered = apply_prompt_mode(request).messages[-1].content
    for text in (rendered, f"<tool_call>{rendered}</tool_call>", f"  <tool_call>\n{rendered}\n</tool_call>\n"):
        with bounded():
            parsed = parse_strict_calls(text)
        assert [(c.name, c.arguments) for c in parsed] == calls


@SETTINGS
@given(st.sampled_from(sorted(TOOLS)), arguments)
def test_an_offered_call_written_as_json_tagged_or_fenced_is_rescued_as_that_call(
    name: str, args: dict[str, Any]
) -> None:
    assume(not isinstance(args.get("properties"), dict))  # that shape is a tool definition, never rescued
    body = json.dumps({"name": name, "arguments": args})
    for text, fmt in (
        (body, "json"),
        (f"<tool_call>{body}</tool_call>", "tagged"),
        (f"Calling it now.\n```json\n{body}\n```", "fenced"),
    ):
        with bounded():
            found = rescue_calls(text, TOOLS)
        assert found is not None, text
        assert [(c.name, c.arguments) for c in found[0]] == [(name, args)] and found[1] == fmt


# -- regressions: inputs that broke the parsers ---------------------------------------------------------

BROKE: dict[str, str] = {
    # json.loads raised RecursionError (strict parser, rescue's _loads and its prose scan)
    "deep list": "[" * 5000,
    "deep list closed": "[" * 5000 + "]" * 5000,
    "deep arguments": '{"name":"get_weather","arguments":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}",
    "deep object in prose": "ok " + '{"a":' * 3000,
    # ast.literal_eval raised TypeError (unhashable dict key, set of lists)
    "unhashable key": "{[1]: 2}",
    "set of lists": "{1, [2]}",
    # json.loads raised ValueError: an integer past Python's 4,300-digit limit
    "huge integer": '{"name":"get_weather","arguments":{"city":' + "9" * 5000 + "}}",
    # the strict parser's <tool_call> regex backtracked quadratically on a run of spaces (minutes)
    "tag then spaces": "<tool_call>" + " " * 20000 + "x",
    # rescue's name(...) scan was quadratic: 31 s and 9 s
    "nested calls": "get_weather(" * 4000,
    "nested calls closed": "get_weather(" * 2000 + ")" * 2000,
}


@pytest.mark.parametrize("text", BROKE.values(), ids=BROKE.keys())
def test_inputs_that_broke_a_parser_now_parse_to_nothing(text: str) -> None:
    strict, rescued = parse_both(text)
    assert strict == [] or all(c.malformed for c in strict)
    assert rescued is None


def test_a_python_set_or_complex_argument_is_not_rescued_as_an_unstorable_value() -> None:
    # _literal returned a set, which json.dumps (the dedup key, then the results file) refused
    assert rescue_calls("get_weather(city={'Paris', 'Lyon'})", TOOLS) is None
    assert rescue_calls("get_weather(city=1j)", TOOLS) is None
    found = rescue_calls("get_weather(city=('Paris', 'Lyon'))", TOOLS)
    assert found is not None and found[0][0].arguments == {"city": ["Paris", "Lyon"]}


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "get_weather", "arguments": {"": "</tool_call>"}}</tool_call>',
        'Calling it.\n```json\n{"name": "get_weather", "arguments": {"note": "```"}}\n```',
    ],
)
def test_a_closing_tag_or_fence_inside_an_argument_does_not_cut_the_call_short(text: str) -> None:
    # found by the round-trip property: the lazy tag/fence match ended inside the JSON string
    found = rescue_calls(text, TOOLS)
    assert found is not None and found[1] in ("tagged", "fenced")
    assert [c.name for c in found[0]] == ["get_weather"]


def test_deeply_nested_argument_text_is_invalid_json_not_a_crash() -> None:
    # llama-server or a proxy may hand back any argument string; parse_arguments raised RecursionError
    value, error = parse_arguments("[" * 100_000)
    assert value is None and error == "invalid JSON: RecursionError"
