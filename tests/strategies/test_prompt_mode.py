"""The prompt-mode call parser: what counts as a call, a broken call, or prose."""

from __future__ import annotations

import pytest

from evalkit.prompt_mode import parse_strict_calls


def test_a_pretty_printed_call_parses() -> None:
    calls = parse_strict_calls('{\n  "name": "get_weather",\n  "arguments": {"city": "Paris"}\n}')
    assert [(c.name, c.arguments, c.malformed) for c in calls] == [("get_weather", {"city": "Paris"}, False)]


@pytest.mark.parametrize(
    "text",
    [
        # grammar output cut off by max_tokens, as SmolLM2 produced it on a real llama-server
        '{\n  "name": "respond",\n  "arguments": {\n    "message": "Today\'s Lyon weather is quite',
        '{"name": "get_weather", "arguments": {"city": "Par',
        '[ {"name": "get_weather", "arguments": {',
        '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>',
    ],
)
def test_a_truncated_or_broken_call_is_kept_as_a_malformed_call(text: str) -> None:
    calls = parse_strict_calls(text)
    assert (
        len(calls) == 1
        and calls[0].malformed
        and calls[0].raw_arguments == text.strip().removeprefix("<tool_call>").removesuffix("</tool_call>")
    )
    assert calls[0].name in {"respond", "get_weather"}


@pytest.mark.parametrize(
    "text",
    [
        "Hello! How can I help?",
        '{"answer": 12}',  # JSON, but not a call
        'Use {"name": "x"} as the format.',  # prose that mentions a call
        '{ "city": "Paris", "name": "bob',  # broken JSON whose first key is not "name"
    ],
)
def test_prose_and_other_json_are_not_calls(text: str) -> None:
    assert parse_strict_calls(text) == []
