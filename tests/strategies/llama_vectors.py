"""Read llama.cpp's grammar test vectors (tests/test-grammar-integration.cpp) for `gbnf_checker`.

Each `test_grammar("desc", R"(grammar)", {passing...}, {failing...});` call (with triple quotes) becomes
(desc, grammar, passing, failing). Only what those calls use of C++ string syntax is decoded.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["grammar_cases"]

_CALL = re.compile(
    r'test_grammar\(\s*"([^"]*)",\s*(?://[^\n]*\s*)*R"""\((.*?)\)""",\s*(?://[^\n]*\s*)*'
    r"\{(.*?)\},\s*(?://[^\n]*\s*)*\{(.*?)\}\s*\);",
    re.DOTALL,
)
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


def _decode(literal: str) -> str:
    out, i = [], 0
    while i < len(literal):
        if literal[i] != "\\":
            out.append(literal[i])
            i += 1
        elif literal[i + 1] == "x":
            j = i + 2
            while j < len(literal) and literal[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(chr(int(literal[i + 2 : j], 16)))
            i = j
        else:
            out.append(_ESCAPES[literal[i + 1]])
            i += 2
    return "".join(out)


def _strings(block: str) -> list[str]:
    block = re.sub(r"^\s*//.*$", "", block, flags=re.MULTILINE)
    return [_decode(m) for m in _STRING.findall(block)]


def grammar_cases(path: Path) -> list[tuple[str, str, list[str], list[str]]]:
    source = path.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), _strings(m.group(3)), _strings(m.group(4))) for m in _CALL.finditer(source)]
