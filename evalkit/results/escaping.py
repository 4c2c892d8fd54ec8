"""Text that leaves evalkit, made safe for where it goes: the one place for it.

Ids, names and reasons come from scenario files, configs and results files, and results hold model
output: all of it is untrusted. An ESC byte in a scenario id made `gate --junit` write XML that no
parser reads; a newline in one split the `--markdown` table and turned the next line into a
heading; on a terminal, ESC sequences and a carriage return can rewrite what is shown.

- `one_line`: a name or id on one line: every control character (newlines included), line and
  paragraph separator and bidirectional-text control is shown escaped (`\\x1b`, `\\n`, `\\u202e`);
- `terminal_text`: text for a terminal or a plain file: the same, but newlines and tabs stay;
- `markdown_cell`: a markdown table cell or list item: line breaks become spaces, the rest as
  `one_line`, and `\\ | < > `` ` `` escaped (a cell stays one cell, inline HTML stays inert);
- `xml_text`: JUnit XML: `terminal_text`, and every character XML 1.0 does not allow (surrogates,
  U+FFFE, U+FFFF) escaped too, so the file always parses;
- `plural`: a count in words, "1 infra error", "2 infra errors" (never "1 infra errors");
- HTML: jinja2 escapes markup; its `finalize` (evalkit.report.html) runs `terminal_text` on every
  value a template prints.
"""

from __future__ import annotations

import re

__all__ = ["markdown_cell", "one_line", "plural", "terminal_text", "xml_text"]

# C0 and C1 controls and DEL; U+2028/2029 (line and paragraph separators); bidirectional-text controls
# (U+061C, U+200E/F, U+202A-202E, U+2066-2069), which can make a name read as another ("trojan source")
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_UNSAFE_KEEPING_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
_MARKDOWN = re.compile(r"([\\|`])")


def _shown(match: re.Match[str]) -> str:
    # the character's own escape (`\x1b`, `\u202e`): a reader sees what was there, and it does nothing
    return match.group().encode("unicode_escape", errors="backslashreplace").decode("ascii")


def one_line(text: str) -> str:
    """`text` on one line, every control character shown escaped."""
    return _UNSAFE.sub(_shown, text)


def terminal_text(text: str) -> str:
    """`text` with its lines and tabs, every other control character shown escaped."""
    return _UNSAFE_KEEPING_LINES.sub(_shown, text)


def markdown_cell(text: str) -> str:
    """`text` inside one markdown table cell or list item (and inert as inline HTML)."""
    # line breaks as spaces first: in prose a newline is a space, and `one_line` would show it as `\n`
    flat = one_line(" ".join(text.splitlines()))
    return _MARKDOWN.sub(r"\\\1", flat).replace("<", "&lt;").replace(">", "&gt;")


def xml_text(text: str) -> str:
    """`text` as XML 1.0 can hold it (lines and tabs kept; ElementTree escapes the markup)."""
    return _NOT_XML.sub(_shown, terminal_text(text))


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, in the plural (`many`, by default `noun` + "s") unless `n` is 1."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"
