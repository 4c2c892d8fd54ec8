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
`array`, `dict`) are read by the port of BFCL's parsers in `evalkit.scenario.language_collections`,
each element by its parameter's `items.type` (the item type); text they do not match stays text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evalkit.scenario.language_collections import JAVA_COLLECTIONS, JS_COLLECTIONS, java_collection, js_collection

__all__ = ["COLLECTIONS", "LANGUAGE_TYPES", "read_value"]


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


_INTEGER = _whole(r"^-?\d+$", int)
_SCALARS: dict[str, dict[str, Callable[[str], Any]]] = {
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
    },
    "javascript": {
        "String": _js_string,
        "integer": _INTEGER,
        "float": _whole(r"^-?\d+(\.\d+)?$", float),
        "Bigint": _whole(r"^-?\d+n$", lambda t: int(t[:-1])),
        "Boolean": _boolean,
        "any": _text,
    },
}


COLLECTIONS = {"java": JAVA_COLLECTIONS, "javascript": JS_COLLECTIONS}
_COLLECTION_READERS = {"java": java_collection, "javascript": js_collection}
LANGUAGE_TYPES: dict[str, tuple[str, ...]] = {lang: (*kinds, *COLLECTIONS[lang]) for lang, kinds in _SCALARS.items()}


def _converter(language: str) -> Callable[[str, str, str | None], Any]:
    """BFCL's `java_type_converter` / `js_type_converter`: one value (a collection's element) by its kind."""

    def convert(text: str, kind: str, items: str | None) -> Any:
        if kind in COLLECTIONS[language]:
            return _COLLECTION_READERS[language](text, kind, items, convert)
        if kind not in _SCALARS[language]:
            raise ValueError(f"Unsupported type: {kind}")  # as BFCL's converters raise
        return _SCALARS[language][kind](text)

    return convert


_CONVERTERS = {language: _converter(language) for language in _SCALARS}


def read_value(text: str, language: str, kind: str, items: str | None = None) -> Any:
    """`text` read as BFCL reads a `kind` argument in `language` (`items`: a collection's item type, the
    parameter's `items.type`); text that does not match stays text. An integer whose digits Python will
    not read (more than 4,300) stays text as well."""
    try:
        return _CONVERTERS[language](text, kind, items)
    except ValueError:
        return text
