"""Java and JavaScript collections written as text, read back as BFCL's checker reads them.

A port of BFCL's collection parsers (`bfcl_eval/eval_checker/ast_eval/type_convertor/
java_type_converter.py`: `parse_arraylist`, `parse_array`, `parse_hashmap`, `parse_java_value`;
`js_type_converter.py`: `parse_js_collection`, `parse_js_value`), from the Berkeley Function Calling
Leaderboard (gorilla, Copyright the Gorilla authors, Apache License 2.0). The regular expressions and
the order of the tests are BFCL's; so are their quirks, which decide verdicts and are kept on purpose
(docs/bfcl.md):

- elements are split on every comma, inside quotes too (`"a, b"` is two elements);
- Java: an `Array`'s elements are read with the item type's rule, so a `String` item keeps its quotes;
  an `ArrayList`'s `String` and `char` items lose their first and last characters, whatever they are;
  a `HashMap` needs `new HashMap<...>()`, keys in double quotes, and reads each value untyped
  (`parse_java_value`: `true`/`false`, a quoted string, `5L`, `5f`, then Python's `int`, then `float`);
  without an item type, elements are read untyped too;
- JavaScript: the text is stripped first; an array is the first `[...]` or `new Array(...)` at the start
  (up to the first `]` or `)`), a 2-D array `[[...], [...]]` reads its rows untyped; a quoted element
  of a collection item type is read with `String` items; an object is the first `{...}` (up to the first
  `}`), each value stripped of quotes before it is read untyped (`"5"` reads as 5); any error reads the
  text as itself.

Text that none of the patterns match is itself (stripped, in JavaScript). The element readers of the
scalar types are passed in (`evalkit.scenario.language_values` holds them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["JAVA_COLLECTIONS", "JS_COLLECTIONS", "java_collection", "js_collection"]

Convert = Callable[[str, str, "str | None"], Any]  # (text, kind, item kind): one value read by its kind
JAVA_COLLECTIONS = ("Array", "ArrayList", "HashMap")
JS_COLLECTIONS = ("array", "dict")

_LONG = re.compile(r"^-?\d+[lL]$")
_FLOAT_F = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$")
_AS_LIST = re.compile(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)")
_ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
_JS_2D = re.compile(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
_JS_ARRAY = re.compile(r"\[(.*?)\]|\bnew\s+Array\((.*?)\)")
_JS_ROW = re.compile(r"\[(.*?)\]")
_JS_OBJECT = re.compile(r"\{(.*?)\}")
_JS_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")


def java_value(text: str) -> Any:
    """BFCL's `parse_java_value`: a value read without its type."""
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if _LONG.match(text):
        return int(text[:-1])
    if _FLOAT_F.match(text):
        return float(re.sub(r"[fF]$", "", text))
    return _number_or_text(text)


def _number_or_text(text: str) -> Any:
    """Both parsers' last resort: Python's `int`, then `float`, else the text."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def java_collection(text: str, kind: str, items: str | None, convert: Convert) -> Any:
    """BFCL's `parse_java_collection`; `items`: the parameter's `items.type` (None: elements untyped)."""
    if kind == "ArrayList":
        return _arraylist(text, items, convert)
    if kind == "Array":
        return _array(text, items, convert)
    return _hashmap(text)


def _arraylist_item(text: str, items: str | None, convert: Convert) -> Any:
    if items in ("char", "String"):
        return text[1:-1]  # BFCL: "Remove the quotes", whatever the first and last characters are
    return convert(text, items, None) if items else java_value(text)


def _arraylist(text: str, items: str | None, convert: Convert) -> Any:
    found = _AS_LIST.search(text)
    if found:
        return [_arraylist_item(e.strip(), items, convert) for e in found.group(1).split(",")]
    found = _ADDS.search(text)
    if found:
        return [_arraylist_item(v.strip(), items, convert) for v in _ADD.findall(found.group(1))]
    return [] if _EMPTY_LIST.search(text) else text


def _array(text: str, items: str | None, convert: Convert) -> Any:
    found = _ARRAY.search(text)
    if not found:
        return text
    parts = [x.strip() for x in found.group(1).split(",") if x.strip()]
    return [convert(x, items, None) if items else java_value(x) for x in parts]


def _hashmap(text: str) -> Any:
    found = _MAP.search(text)
    if found:
        puts = found.group(1)
        return {key: java_value(value.strip()) for key, value in _PUT.findall(puts)} if puts.strip() else {}
    return {} if _EMPTY_MAP.search(text) else text


def js_value(text: str) -> Any:
    """BFCL's `parse_js_value`: a value read without its type."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if (text.startswith('"') and text.endswith('"')) or (text.startswith("'") and text.endswith("'")):
        return text[1:-1]
    return _number_or_text(text)


def js_collection(code: str, kind: str, items: str | None, convert: Convert) -> Any:
    """BFCL's `parse_js_collection`: `kind` is `array` or `dict`."""
    code = code.strip()
    if kind == "array":
        try:
            return _js_array(code, items, convert)
        except Exception:  # BFCL's bare `except`: an item type it cannot read, too deep a nesting
            return code
    return _js_object(code, convert)


def _js_array(code: str, items: str | None, convert: Convert) -> Any:
    if _JS_2D.match(code):
        rows = []
        for index, row in enumerate(_JS_ROW.findall(_JS_2D.match(code).group(0))):  # type: ignore[union-attr]
            row = row.strip()
            if index == 0 and row.startswith("["):
                row = row[1:]
            rows.append([js_value(e.strip()) for e in row.split(",")])
        return rows
    found = _JS_ARRAY.match(code)
    if not found:
        return code
    body = (found.group(1) if found.group(1) is not None else found.group(2)).strip()
    elements = body.split(",") if body else []
    if not items:
        return [js_value(e.strip()) for e in elements]
    # BFCL passes "String" as the item type of a quoted element (it matters only to a collection item)
    return [convert(e.strip(), items, "String" if e.strip()[:1] in ("'", '"') else None) for e in elements]


def _js_object(code: str, convert: Convert) -> Any:
    if code == "{}":
        return {}
    found = _JS_OBJECT.match(code)
    if not found:
        return code
    try:
        out: dict[str, Any] = {}
        for key, value in _JS_PAIR.findall(found.group(1)):
            key, value = key.strip().strip("'\""), value.strip()
            if value.startswith("[") and value.endswith("]"):
                out[key] = js_collection(value, "array", None, convert)
            elif value.startswith("{") and value.endswith("}"):
                out[key] = _js_object(value, convert)
            else:
                out[key] = js_value(value.strip("'\""))
        return out
    except Exception:  # BFCL prints the error and reads the text as itself
        return code
