"""BFCL's Java and JavaScript cases: every argument is a string, in the language's own spelling.

BFCL shows function-calling models these functions with every parameter typed `string` and a hint in
its description (`bfcl_eval.utils._func_doc_language_specific_pre_processing`); its checker reads the
string back with the declared type's rule (`java_type_converter`, `js_type_converter`) and then judges
the value as it judges a Python argument (`ast_checker.simple_function_checker`): by type, then a
string normalised, a number by value, an answer of another type than the declared one exactly. An
evalkit check says the same with `$parsed` around the typed answer's spec (`evalkit.scenario.
language_values` holds the reading rules): `"5.0"` for a JavaScript float answer 5 passes, as in BFCL,
and `" EVENT_THREAD."` for a Java `integer` parameter whose answer is the name `EVENT_THREAD` fails,
as in BFCL (before, both languages' answers were compared as normalised text). Parameters BFCL reads
as collections (Java arrays, lists and maps; JavaScript arrays and objects) are read by a port of
BFCL's parsers, elements by the parameter's item type (`$parsed`'s `items`); a map's values are
compared by Python's `==`, as BFCL's dict_checker compares them (`bfcl_equal`). docs/bfcl.md.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

__all__ = [
    "LANGUAGES",
    "PYTHON_KIND",
    "bfcl_equal",
    "item_kind",
    "language_functions",
    "language_key",
    "spelled",
    "unreadable_parameter",
]

LANGUAGES = {"simple_java": "Java", "simple_javascript": "JavaScript"}
_KEY = {"simple_java": "java", "simple_javascript": "javascript"}
# each readable type as the Python-typed kind BFCL judges its value by (ast_checker's JAVA_TYPE_CONVERSION
# and JS_TYPE_CONVERSION), in the names of BFCL's Python function docs
PYTHON_KIND = {
    "java": {
        **dict.fromkeys(("byte", "short", "integer", "long"), "integer"),
        **dict.fromkeys(("float", "double"), "float"),
        "boolean": "boolean",
        **dict.fromkeys(("char", "String", "any"), "string"),
        **dict.fromkeys(("Array", "ArrayList"), "array"),
        "HashMap": "dict",
    },
    "javascript": {
        "String": "string",
        "integer": "integer",
        "Bigint": "integer",
        "float": "float",
        "Boolean": "boolean",
        "any": "string",
        "array": "array",
        "dict": "dict",
    },
}


def language_key(category: str) -> str:
    return _KEY[category]


def language_functions(category: str, functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function docs as BFCL shows them to a function-calling model in this language's category."""
    language = LANGUAGES[category]
    out = copy.deepcopy(functions)
    for item in out:
        item["description"] = item.get("description", "") + f" Note that the provided function is in {language}."
        for value in item.get("parameters", {}).get("properties", {}).values():
            kind = value.get("type")
            if kind == "any":
                value["description"] = (
                    value.get("description", "")
                    + f" This parameter can be of any type of {language} object in string representation."
                )
            else:
                value["description"] = (
                    value.get("description", "")
                    + f" This is {language} {kind} type parameter in string representation."
                )
            value.pop("items", None)
            value.pop("properties", None)
            value["type"] = "string"
    return out


def unreadable_parameter(category: str, answer: dict[str, Any], functions: list[dict[str, Any]]) -> str:
    """Why a case cannot be imported for how BFCL reads a parameter's text ('' if none): a type BFCL's
    checker cannot read (`Set`, `Queue`, a list without an item type: it raises), a map whose answer gives
    a key one value instead of a list of them (BFCL's dict_checker indexes it as one: a text's characters
    become the alternatives), or a list whose every item BFCL reads as text while no acceptable answer is
    a list of text (BFCL fails every output)."""
    declared = {f["name"]: f.get("parameters", {}).get("properties", {}) for f in functions}
    for entry in answer["ground_truth"]:
        for name, params in entry.items():
            for param, alts in params.items():
                why = _unreadable(category, f"{name}.{param}", declared.get(name, {}).get(param, {}), alts)
                if why:
                    return why
    return ""


def _unreadable(category: str, where: str, schema: dict[str, Any], alts: list[Any]) -> str:
    """Why the parameter at `where` is unreadable ('' if it is not)."""
    kinds, shown = PYTHON_KIND[_KEY[category]], LANGUAGES[category]
    kind, items = schema.get("type", ""), item_kind(schema)
    if kind not in kinds or (kinds[kind] == "array" and items not in kinds):
        what = f"{kind or 'untyped'}" + (f" of {items or 'untyped items'}" if kind in kinds else "")
        return f"{where}: a {shown} {what} parameter BFCL cannot read"
    loose = next((k for a in alts if isinstance(a, dict) for k, v in a.items() if not isinstance(v, list)), None)
    if kinds[kind] == "dict" and loose is not None:
        return (
            f"{where}.{loose}: the possible answer gives one value, not a list of alternatives (BFCL indexes it as one)"
        )
    if kinds[kind] == "array" and kinds[items] == "string" and all(_not_text(a) for a in alts):
        return (
            f"BFCL fails every output: it reads each item of {where} (a {shown} {kind} of {items}) as text, "
            "and no acceptable answer is a list of text"
        )
    return ""


def item_kind(schema: dict[str, Any]) -> str:
    """A parameter's item type (`items.type`), which BFCL reads a collection's elements by ('' if none)."""
    items = schema.get("items")
    return str(items.get("type", "")) if isinstance(items, dict) else ""


def _not_text(alternative: Any) -> bool:
    return isinstance(alternative, list) and any(not isinstance(x, str) for x in alternative)


_SUFFIX = {"java": {"long": "L", "float": "f"}, "javascript": {"Bigint": "n"}}


def spelled(value: Any, language: str, kind: str, items: str = "") -> Any:
    """A typed answer as the language spells it (the reference call's text): a Java `long` needs its `L`,
    a `float` its `f`, a JavaScript `Bigint` its `n`; a boolean is `true` or `false`; a float is written
    without an exponent (JavaScript's rule reads none). A list or an object is spelled as BFCL's parsers
    read it back (`items`: the item type): a Java `Array` of text without quotes (BFCL keeps them)."""
    if isinstance(value, list) and kind in ("Array", "ArrayList", "array"):
        texts = [_item(v, language, kind, items) for v in value]
        if kind == "Array":
            return f"new {_JAVA_NAMES.get(items, items)}[]{{{', '.join(texts)}}}"
        if kind == "ArrayList":
            return f"new ArrayList<>(Arrays.asList({', '.join(texts)}))" if texts else "new ArrayList<>()"
        return f"[{', '.join(texts)}]"
    if isinstance(value, dict) and kind in ("HashMap", "dict"):
        if kind == "HashMap":
            puts = "".join(f'put("{k}", {_untyped(v, language)}); ' for k, v in value.items())
            return f"new HashMap<String, Object>() {{{{ {puts}}}}}" if value else "new HashMap<>()"
        return "{" + ", ".join(f'"{k}": {_untyped(v, language)}' for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        text = format(Decimal(repr(value)), "f") if isinstance(value, float) else str(value)
        if isinstance(value, float) and "." not in text:
            text += ".0"
        return text + _SUFFIX[language].get(kind, "")
    return value


_JAVA_NAMES = {"integer": "int", "any": "Object"}


def _item(value: Any, language: str, kind: str, items: str) -> str:
    """One element: quoted where BFCL removes the quotes (text items of a Java `ArrayList`, a JavaScript
    array's `String` items), bare where it keeps them (a Java `Array`'s)."""
    text = spelled(value, language, items)
    text_items = items == "String" if kind == "array" else kind == "ArrayList" and items in ("String", "char")
    quoted = isinstance(value, str) and text_items
    return f'"{text}"' if quoted else str(text)


def _untyped(value: Any, language: str) -> str:
    """A value BFCL reads without its type (a map's or an object's): text quoted, lists and objects spelled."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_untyped(v, language) for v in value) + "]"
    if isinstance(value, dict):
        return spelled(value, language, "dict")  # type: ignore[no-any-return]
    return str(spelled(value, language, "double" if language == "java" else "float"))


def bfcl_equal(value: Any, top: bool = True) -> Any:
    """A spec that accepts what Python's `==` makes equal to `value`, as BFCL compares a map's or an
    object's values (`dict_checker`, after normalising a string at the top): 1, 1.0 and true are equal;
    text inside a list is compared exactly."""
    if isinstance(value, str):
        return value if top else {"$exact": value}
    if isinstance(value, list):
        return [bfcl_equal(v, top=False) for v in value]
    if isinstance(value, dict):
        dollar = any(str(k).startswith("$") for k in value)
        return {"$exact": value} if dollar else {k: bfcl_equal(v, top=False) for k, v in value.items()}
    if isinstance(value, bool | int | float):
        equal = [value, float(value)] + ([value == 1] if value in (0, 1) and not isinstance(value, bool) else [])
        unique = [e for i, e in enumerate(equal) if not any(type(e) is type(f) for f in equal[:i])]
        return unique[0] if len(unique) == 1 else {"$any_of": unique}
    return value
