"""A value written in a programming language's own spelling, read back as BFCL's checker reads it.

BFCL shows a function-calling model its Java and JavaScript functions with every parameter typed
`string`, and reads each argument back from its text with the declared type's rule before it
compares it with the typed answer (`bfcl_eval/eval_checker/ast_eval/type_convertor/
java_type_converter.py` and `js_type_converter.py`; docs/bfcl.md). Text that does not match the rule
stays text, and then fails a number or boolean answer by its type. The rules, as BFCL writes them:

Java: `byte`, `short`, `integer`: `^-?\\d+$`; `long`: the same with `L`/`l`; `float`: a decimal with an
optional exponent and `f`/`F`; `double`: a decimal with an optional exponent; `boolean`: `true` or
`false`; `char`, `String`, `any`: the text itself (BFCL's `char` pattern never matches, so a char is its
text too). JavaScript: `String`: the text without one pair of enclosing quotes (`"x"` or `'x'`);
`integer`: `^-?\\d+$`; `float`: `^-?\\d+(\\.\\d+)?$` (no exponent); `Bigint`: digits and `n`; `Boolean`:
`true` or `false`; `any`: the text itself. Python's `re.match` is used as BFCL uses it (`$` also
matches before a final newline). Collections (Java `Array`, `ArrayList`, `HashMap`; JavaScript
`array`, `dict`) are read only as far as a name given for one needs: text BFCL's patterns would take
for a collection is `COLLECTION`, which equals nothing; other text is itself (stripped, in
JavaScript). evalkit imports no case whose answer is a collection itself (docs/bfcl.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["COLLECTION", "LANGUAGE_TYPES", "read_value"]


class _Collection:
    """What a collection's text reads as here: BFCL would parse it; it equals no answer evalkit imports."""

    def __repr__(self) -> str:
        return "(a collection)"


COLLECTION = _Collection()


def _whole(pattern: str, read: Callable[[str], Any]) -> Callable[[str], Any]:
    compiled = re.compile(pattern)
    return lambda text: read(text) if compiled.match(text) else text


def _js_string(text: str) -> str:
    quoted = (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'"))
    return text[1:-1] if quoted else text


def _boolean(text: str) -> Any:
    return text == "true" if text in ("true", "false") else text


def _text(text: str) -> str:
    return text


def _collection(*patterns: str, strip: bool = False, find: bool = True) -> Callable[[str], Any]:
    """BFCL's collection patterns (`re.search` in Java's reader, `re.match` after stripping in JavaScript's)."""
    compiled = [re.compile(p) for p in patterns]

    def read(text: str) -> Any:
        text = text.strip() if strip else text
        if text == "{}" and not find:
            return COLLECTION
        hit = any((c.search(text) if find else c.match(text)) for c in compiled)
        return COLLECTION if hit else text

    return read


_INTEGER = _whole(r"^-?\d+$", int)
LANGUAGE_TYPES: dict[str, dict[str, Callable[[str], Any]]] = {
    "java": {
        "byte": _INTEGER,
        "short": _INTEGER,
        "integer": _INTEGER,
        "long": _whole(r"^-?\d+[lL]$", lambda t: int(re.sub(r"[lL]$", "", t))),
        "float": _whole(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$", lambda t: float(re.sub(r"[fF]$", "", t))),
        "double": _whole(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$", float),
        "boolean": _boolean,
        "char": _text,
        "String": _text,
        "any": _text,
        "Array": _collection(r"new\s+\w+\[\]\s*\{(.*?)\}"),
        "ArrayList": _collection(
            r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)",
            r"(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}",
            r"new\s+ArrayList<\w*>\(\)",
        ),
        "HashMap": _collection(
            r"(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", r"new\s+HashMap<.*?>\s*\(\)"
        ),
    },
    "javascript": {
        "String": _js_string,
        "integer": _INTEGER,
        "float": _whole(r"^-?\d+(\.\d+)?$", float),
        "Bigint": _whole(r"^-?\d+n$", lambda t: int(t[:-1])),
        "Boolean": _boolean,
        "any": _text,
        "array": _collection(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)", strip=True, find=False),
        "dict": _collection(r"\{(.*?)\}", strip=True, find=False),
    },
}


def read_value(text: str, language: str, kind: str) -> Any:
    """`text` read as BFCL reads a `kind` argument in `language`; text that does not match stays text.
    An integer whose digits Python will not read (more than 4,300) stays text as well."""
    try:
        return LANGUAGE_TYPES[language][kind](text)
    except ValueError:
        return text
