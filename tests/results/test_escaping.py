"""The one place text is made safe for where it goes (`evalkit.results.escaping`), as properties over
any text: a name stays on one line, a markdown cell stays one cell, XML always parses."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.results.escaping import markdown_cell, one_line, terminal_text, xml_text

CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_one_line_and_terminal_text_leave_no_control_character(text: str) -> None:
    assert not CONTROLS.search(one_line(text))
    assert not CONTROLS.search(terminal_text(text).replace("\n", "").replace("\t", ""))
    assert terminal_text(text).count("\n") == text.count("\n")


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_a_markdown_cell_stays_one_cell(text: str) -> None:
    cell = markdown_cell(text)
    assert not CONTROLS.search(cell) and "\n" not in cell
    assert not re.search(r"(?<!\\)(\\\\)*\|", cell.replace("\\\\", ""))  # every pipe escaped
    assert "<" not in cell and ">" not in cell


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_xml_text_always_parses(text: str) -> None:
    element = ET.Element("testcase", name=xml_text(one_line(text)))
    element.text = xml_text(text)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("name") == xml_text(one_line(text))


def test_escapes_are_visible_not_dropped() -> None:
    assert one_line("a\x1b[2Jb\nc\u202ed") == "a\\x1b[2Jb\\nc\\u202ed"
    assert terminal_text("a\rb\nc\td") == "a\\rb\nc\td"
    assert markdown_cell("x\ny|<z>`") == "x y\\|&lt;z&gt;\\`"
    assert xml_text("a\ud800b\x00") == "a\\ud800b\\x00"
