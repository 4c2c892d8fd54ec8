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
# BFCL's three patterns below backtrack for minutes on a few hundred characters that do not match
# (`new HashMap<>() {` and 250 spaces: 24 s; `[[a]` and 30 `,[a]`: hours). Model output is untrusted,
# so each is computed without backtracking (`_adds_body`, `_map_body`, `_js_2d_end`) and the
# pattern is kept as the reference those are tested against (tests/bfcl/test_languages.py).
ADDS = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}", re.DOTALL)
_ADDS_START = re.compile(r"new\s+ArrayList<\w*>\(\)\s*\{\{")
_ADD = re.compile(r"add\((.+?)\)")
_EMPTY_LIST = re.compile(r"new\s+ArrayList<\w*>\(\)")
_ARRAY = re.compile(r"new\s+\w+\[\]\s*\{(.*?)\}")
MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}", re.DOTALL)
_MAP_START = re.compile(r"new\s+HashMap<")
_MAP_OPEN = re.compile(r"\s*\(\)\s*\{")
_PUT = re.compile(r"put\(\"(.*?)\",\s*(.*?)\)")
_EMPTY_MAP = re.compile(r"new\s+HashMap<.*?>\s*\(\)")
JS_2D = re.compile(r"\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\)")
_JS_2D_START = re.compile(r"\[\s*\[|new\s+Array\(\s*\[")
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
    adds = adds_body(text)
    if adds is not None:
        return [_arraylist_item(v.strip(), items, convert) for v in _ADD.findall(adds)]
    return [] if _EMPTY_LIST.search(text) else text


def _array(text: str, items: str | None, convert: Convert) -> Any:
    found = _ARRAY.search(text)
    if not found:
        return text
    parts = [x.strip() for x in found.group(1).split(",") if x.strip()]
    return [convert(x, items, None) if items else java_value(x) for x in parts]


def _hashmap(text: str) -> Any:
    puts = map_body(text)
    if puts is not None:
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
    end = js_2d_end(code)
    if end is not None:
        rows = []
        for index, row in enumerate(_JS_ROW.findall(code[:end])):
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


# --- BFCL's backtracking patterns, computed in linear time --------------------------------------


def _skip_space(text: str, i: int) -> int:
    """The first position at or after `i` that is not whitespace (what `\\s*` takes: `str.isspace`)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def adds_body(text: str) -> str | None:
    """`ADDS.search(text).group(1)`, or None where it does not match.

    After `{{` and its whitespace (at `b`), `(.+?)` takes the fewest characters (at least one) after
    which only whitespace comes before `}}`; where there are none, the engine gives one of the
    whitespace characters back, which is the body when `}}` follows them."""
    for start in _ADDS_START.finditer(text):
        a = start.end()
        b = _skip_space(text, a)
        close = text.find("}}", b + 1)
        if close >= 0:
            return text[b : b + 1 + len(text[b + 1 : close].rstrip())]
        if b > a and text.startswith("}}", b):
            return text[b - 1 : b]
    return None


def map_body(text: str) -> str | None:
    """`MAP.search(text).group(1)`, or None where it does not match.

    The pattern's tail (from the `{`) matches exactly when a `}` comes later, and then its group is
    what lies between the opening braces (with their whitespace) and the first `}`, without the
    whitespace before it. So the first `new HashMap<`, then the first `>` after it, that is followed
    by `()` and a `{` with a `}` somewhere after it, is the match."""
    last = text.rfind("}")
    for start in _MAP_START.finditer(text):
        close = text.find(">", start.end())
        while close >= 0:
            opened = _MAP_OPEN.match(text, close + 1)
            if opened and opened.end() - 1 < last:
                b = _skip_space(text, opened.end())
                b = _skip_space(text, b + 1) if text.startswith("{", b) else b
                return text[b : text.find("}", b)].rstrip()
            close = text.find(">", close + 1)
    return None


def js_2d_end(code: str) -> int | None:
    """`JS_2D.match(code).end()`, or None where it does not match.

    Rows are `[`, any characters but a newline, `]`, and the pattern takes, for each row, the first
    `]` from which the rest matches (rows joined by commas, then the closing `]` or `)`). From the
    end backwards: `after[r]` is where the match ends when the rows so far stop at `r`; `row[i]` is
    that end for the first `]` at or after `i` on its line from which the rest matches."""
    start = _JS_2D_START.match(code)
    if not start:
        return None
    close = "]" if code.startswith("[") else ")"
    n = len(code)
    row: list[int | None] = [None] * (n + 2)
    after: list[int | None] = [None] * (n + 2)
    space = [n] * (n + 2)  # space[i]: _skip_space(code, i)
    for i in range(n - 1, -1, -1):
        space[i] = space[i + 1] if code[i].isspace() else i
        if code[i] == ",":
            t = space[i + 1]
            after[i] = row[t + 1] if t < n and code[t] == "[" else None
        elif code[i] == close:
            after[i] = i + 1
        ends_here = after[space[i + 1]] if code[i] == "]" else None
        row[i] = ends_here if ends_here is not None else (None if code[i] == "\n" else row[i + 1])
    return row[start.end()]
