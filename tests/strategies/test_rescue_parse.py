"""`rescue_parse`: calls written as text become calls; prose, examples and unknown names stay prose."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Completion, Message, Sampling, ToolCall, ToolSpec
from evalkit.errors import ConfigError
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from evalkit.strategies.base import Rewrite, TurnView
from evalkit.strategies.rescue_parse import RescueParse, rescue_calls
from tests.fakes import ScriptedBackend, calls, text

WEATHER = ToolSpec(
    name="get_weather",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)
RESPOND = ToolSpec(
    name="respond",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
CLOCK = ToolSpec(name="get_time", parameters={"type": "object", "properties": {}})
TOOLS = {t.name: t for t in (WEATHER, RESPOND, CLOCK)}
PARIS = ("get_weather", {"city": "Paris"})


def found(text: str) -> list[tuple[str, dict[str, Any] | None]]:
    result = rescue_calls(text, TOOLS)
    return [] if result is None else [(c.name, c.arguments) for c in result[0]]


def fmt(text: str) -> str | None:
    result = rescue_calls(text, TOOLS)
    return None if result is None else result[1]


RESCUED = [
    # bare JSON, whole reply
    ('{"name": "get_weather", "arguments": {"city": "Paris"}}', [PARIS], "json"),
    ('  \n{"name": "get_weather", "parameters": {"city": "Paris"}}\n', [PARIS], "json"),
    ('{"tool": "get_weather", "args": {"city": "Paris"}}', [PARIS], "json"),
    ('{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}', [PARIS], "json"),
    ('{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}', [PARIS], "json"),
    ('{"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}', [PARIS], "json"),
    (
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]',
        [PARIS, ("get_time", {})],
        "json",
    ),
    ('{"name": "get_time"}', [("get_time", {})], "json"),
    # small-model slips: trailing comma, missing closers, Python literals
    ('{"name": "get_weather", "arguments": {"city": "Paris",}}', [PARIS], "json"),
    ('{"name": "get_weather", "arguments": {"city": "Paris"}', [PARIS], "json"),
    ("{'name': 'get_weather', 'arguments': {'city': 'Paris'}}", [PARIS], "json"),
    # tags
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', [PARIS], "tagged"),
    (
        'Let me check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        [PARIS],
        "tagged",
    ),
    (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n'
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        [PARIS, ("get_time", {})],
        "tagged",
    ),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}', [PARIS], "tagged"),  # never closed
    ('<function_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</function_call>', [PARIS], "tagged"),
    # Qwen-style XML, inside tags or bare; values typed by the tool's schema
    (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
        "</parameter>\n</function>\n</tool_call>",
        [("get_weather", {"city": "Paris", "days": 3})],
        "tagged",
    ),
    (
        "<function=get_weather><parameter=city>New York</parameter></function>",
        [("get_weather", {"city": "New York"})],
        "xml",
    ),
    (
        "<function=get_weather>\n<parameter=city>\n007\n</parameter>\n</function>",
        [("get_weather", {"city": "007"})],
        "xml",
    ),  # a string parameter stays a string
    (
        '<invoke name="get_weather"><parameter name="city">Rome</parameter></invoke>',
        [("get_weather", {"city": "Rome"})],
        "xml",
    ),
    # fenced code blocks
    ('Sure!\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```', [PARIS], "fenced"),
    ('```\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\nDone.', [PARIS], "fenced"),
    ('```python\nget_weather(city="Paris")\n```', [PARIS], "fenced"),
    # calls inside prose
    ('I\'ll call get_weather({"city": "Paris"}) now.', [PARIS], "prose"),
    ("Let me check: get_weather(city='Paris', days=2)", [("get_weather", {"city": "Paris", "days": 2})], "prose"),
    ('I will use {"name": "get_weather", "arguments": {"city": "Paris"}} to find out.', [PARIS], "prose"),
    ('Checking the forecast. {"name": "get_weather", "arguments": {"city": "Paris"}}', [PARIS], "prose"),
    ('get_weather(city="Paris")', [PARIS], "prose"),
    ("get_time()", [("get_time", {})], "prose"),  # the whole reply is the call
    ('Calling get_weather("Paris")', [PARIS], "prose"),  # positional, one-parameter... of the required one
    (
        "The weather tool: respond(message='It is sunny in Paris.')",
        [("respond", {"message": "It is sunny in Paris."})],
        "prose",
    ),
    ('[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]', [PARIS], "prose"),
    (
        'That was an example. Now the real one: {"name": "get_weather", "arguments": {"city": "Paris"}}',
        [PARIS],
        "prose",
    ),
    ('get_weather(city="Paris", metric=true)', [("get_weather", {"city": "Paris", "metric": True})], "prose"),
]


@pytest.mark.parametrize("reply, expected, how", RESCUED, ids=[r[0][:40] for r in RESCUED])
def test_rescues_calls_written_as_text(reply: str, expected: list[Any], how: str) -> None:
    assert found(reply) == expected
    assert fmt(reply) == how


STAYS_PROSE = [
    "Hello! How can I help you today?",
    "The square root of 144 is 12.",
    "Thanks, glad I could help!",
    "The function get_weather takes a city name.",
    "You can use get_weather() to check the weather.",
    'Would you like me to call get_weather(city="Paris")?',
    "If you want, I can run get_weather(city='Paris') for you.",
    "I don't need to call get_weather(city='Paris') for this; it is sunny.",
    # JSON examples in an answer to a question
    'Here is JSON for a person: {"name": "Alice", "age": 30}',
    '```json\n{"name": "Alice", "age": 30}\n```',
    '[{"name": "Alice"}, {"name": "Bob"}]',
    'For example: {"name": "get_weather", "arguments": {"city": "Paris"}}',
    'A tool call looks like this:\n\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
    'The format is {"name": "<tool>", "arguments": {...}}.',
    # unknown tools are never rescued, in any format
    '{"name": "search_web", "arguments": {"query": "weather"}}',
    '<tool_call>{"name": "send_email", "arguments": {}}</tool_call>',
    "<function=delete_all><parameter=x>1</parameter></function>",
    'I\'ll call search_web({"q": "Paris"}).',
    # JSON that mentions a tool name but is not a call
    '{"city": "get_weather"}',
    '{"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object"}}',
    '{"name": "get_weather", "arguments": {"type": "object", "properties": {"city": {"type": "string"}}}}',
    'The tools are: {"tools": ["get_weather", "get_time"]}',
    '{"name": "get_weather", "arguments": {"city": "Paris"}, "reason": "user asked"}',
    # a call in prose without its required argument is a mention, not a call
    'I could look at {"name": "get_weather", "arguments": {}} later.',
    "Try get_weather(city) with a real city.",
    "mock.get_weather(city='Paris') in the test suite",
    "```python\nprint('hello')\n```",
    "```python\ndef get_weather(city):\n    return api.fetch(city)\n```",
    "Call it as get_weather(city=user_city) in your code.",
    "I won't call get_weather(city='Paris') because you asked about Rome.",
    "{not json at all}",
    '{"name": "get_weather", "arguments": {"city": "Par',  # cut off mid-value: repairing would invent it
    "",
]


@pytest.mark.parametrize("reply", STAYS_PROSE)
def test_prose_stays_prose(reply: str) -> None:
    assert rescue_calls(reply, TOOLS) is None


def test_only_offered_tools_are_rescued_when_a_list_mixes_known_and_unknown() -> None:
    reply = '[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "hack", "arguments": {}}]'
    assert found(reply) == [PARIS]


def test_duplicates_are_rescued_once_and_ids_are_left_to_the_loop() -> None:
    result = rescue_calls(
        '<tool_call>{"name": "get_time"}</tool_call><tool_call>{"name": "get_time"}</tool_call>', TOOLS
    )
    assert result is not None and [c.id for c in result[0]] == [""]


def test_formats_can_be_restricted() -> None:
    reply = 'I\'ll call get_weather({"city": "Paris"}) now.'
    assert rescue_calls(reply, TOOLS, ("json", "tagged")) is None


# --- the strategy's decisions --------------------------------------------------------------------


def view(offered: list[ToolSpec] | None = None, tools: list[ToolSpec] | None = None) -> TurnView:
    return TurnView(
        messages=[Message(role="user", content="weather?")],
        tools=tools or [WEATHER, CLOCK],
        mode="native",
        supports=lambda f: True,
        offered=offered or [],
    )


def test_judge_rewrites_text_into_calls_with_a_note() -> None:
    decision = RescueParse().judge(
        text('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'), view()
    )
    assert isinstance(decision, Rewrite)
    assert [(c.name, c.arguments) for c in decision.reply.tool_calls] == [PARIS]
    assert decision.note == "rescued get_weather from fenced"
    assert decision.reply.text.startswith("```json")  # the model's words are kept for the transcript


def test_judge_leaves_real_calls_prose_and_empty_replies_alone() -> None:
    guard = RescueParse()
    assert guard.judge(calls(ToolCall(name="get_weather", arguments={"city": "Paris"})), view()) is None
    assert guard.judge(text("It is sunny in Paris."), view()) is None
    assert guard.judge(text("   "), view()) is None


def test_judge_repairs_a_strict_call_that_failed_to_parse() -> None:
    broken = '{"name": "get_weather", "arguments": {"city": "Paris",}}'
    reply = Completion(
        text=broken, tool_calls=[ToolCall(name="get_weather", raw_arguments=broken, parse_error="invalid JSON")]
    )
    decision = RescueParse().judge(reply, view())
    assert isinstance(decision, Rewrite) and decision.reply.tool_calls[0].arguments == {"city": "Paris"}


def test_respond_is_rescued_only_when_it_was_offered() -> None:
    reply = text('{"name": "respond", "arguments": {"message": "Hi!"}}')
    assert RescueParse().judge(reply, view()) is None  # scenario tools only: respond is unknown
    decision = RescueParse().judge(reply, view(offered=[WEATHER, RESPOND]))
    assert isinstance(decision, Rewrite) and decision.reply.tool_calls[0].name == "respond"


def test_no_tools_no_rescue() -> None:
    reply = text('{"name": "get_weather", "arguments": {"city": "Paris"}}')
    assert RescueParse().judge(reply, TurnView(messages=[], tools=[], mode="native", supports=lambda f: True)) is None


def test_unknown_formats_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        build_stack([("rescue_parse", {"formats": ["json", "yaml"]})])


# --- in the loop: the rescued reply is judged by the rest of the stack ----------------------------

WEATHER_SCENARIO = Scenario.model_validate(
    {
        "id": "w",
        "family": "sequential_reasoning",
        "turns": ["weather in Paris?"],
        "tools": [
            {
                "name": "get_weather",
                "parameters": WEATHER.parameters,
                "results": [{"when": {"city": "Paris"}, "returns": {"sky": "sunny"}}],
            }
        ],
        "reference": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "reply": "Sunny."},
        "check": {"calls": {"required": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
    }
)


def run(stack: list[str], replies: list[Completion], mode: str = "native") -> Any:
    backend = ScriptedBackend(list(replies))
    state, view = asyncio.run(
        run_loop(
            WEATHER_SCENARIO,
            build_stack([(s, {}) for s in stack]),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(),
            run_id="r",
            seed=1,
            policy=RetryPolicy(attempts=1),
        )
    )
    return state, view


def test_loop_executes_a_rescued_call_and_records_the_rescue() -> None:
    state, view = run(
        ["rescue_parse", "respond_tool"],
        [
            text('I\'ll call get_weather({"city": "Paris"}).'),
            text('<tool_call>{"name": "respond", "arguments": {"message": "Sunny in Paris."}}</tool_call>'),
        ],
    )
    assert [e.call.name for e in view.executed] == ["get_weather"]  # respond was an answer, not a call
    assert state.reply == "Sunny in Paris."
    assert [(i.strategy, i.action) for i in state.interventions] == [("rescue_parse", "rescue")] * 2


def test_loop_prompt_mode_rescues_what_the_strict_parser_refuses() -> None:
    state, view = run(
        ["rescue_parse"],
        [text('Sure! ```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'), text("Sunny.")],
        mode="prompt",
    )
    assert [e.call.arguments for e in view.executed] == [{"city": "Paris"}] and state.reply == "Sunny."
