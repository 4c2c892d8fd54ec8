"""Prompt-mode text read without backtracking (issue 36, item 5), held against the patterns it replaces.

`prompt_tool_line` (serve sim's reading of a prompt-mode tool line) and `called_name` (the strict
parser's name of a broken call) replaced regular expressions that backtracked quadratically on
client or model text. On short texts near a match, where backtracking is cheap, each gives exactly
the old pattern's answer; on hostile texts that held the old patterns for minutes, each answers under
a generous watchdog (not a speed measurement).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.backends.sim_wire import prompt_tool_line
from evalkit.prompt_mode import called_name
from tests.strategies.test_parser_properties import bounded

OLD_TOOL_LINE = re.compile(r"^- (?P<name>[^:\s]+): (?P<desc>.*?) Parameters \(JSON schema\): (?P<schema>\{.*\})$")
OLD_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
TOOL_PIECES = ["- ", "a", "b:", ": ", " ", "\t", "\u00a0", "{", "}", " Parameters (JSON schema): ", "x", '"', ":"]
NAME_PIECES = ['"name"', " ", "\n", ":", '"', "a", "b", "{", "[", "\\"]


def _old_tool_line(line: str) -> tuple[str, str, str] | None:
    match = OLD_TOOL_LINE.match(line)
    return (match.group("name"), match.group("desc"), match.group("schema")) if match else None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOOL_PIECES), max_size=14).map("".join))
def test_a_tool_line_is_read_as_the_old_pattern_read_it(line: str) -> None:
    assert prompt_tool_line(line) == _old_tool_line(line)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(NAME_PIECES), max_size=14).map("".join))
def test_a_broken_calls_name_is_found_as_the_old_pattern_found_it(text: str) -> None:
    old = OLD_NAME.search(text)
    assert called_name(text) == (old.group(1) if old else None)


def test_the_shipped_tool_line_and_call_are_read() -> None:
    line = '- get_weather: The weather. Parameters (JSON schema): {"type": "object"}'
    assert prompt_tool_line(line) == ("get_weather", "The weather.", '{"type": "object"}')
    assert called_name('{"name": "get_weather", "arguments": {"city": ') == "get_weather"


def test_hostile_texts_are_read_at_once() -> None:
    mark = " Parameters (JSON schema): {"
    with bounded(20):
        assert prompt_tool_line("- a: " + mark * 40_000 + "x") is None
        assert prompt_tool_line("- a: " + mark * 40_000 + "}") == (
            "a",
            "",
            mark[len(" Parameters (JSON schema): ") :] + mark * 39_999 + "}",
        )
        assert called_name('"name"' + " " * 200_000 + ':"') is None
        assert called_name(('"name": ' + " " * 100) * 5_000) == "name"  # the next key's quotes
