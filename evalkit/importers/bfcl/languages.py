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
as collections (Java arrays, lists and maps; JavaScript arrays and objects) are parsed by BFCL from
any spelling with regular expressions that split on every comma; their cases are not imported.
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

__all__ = ["LANGUAGES", "PYTHON_KIND", "language_functions", "language_key", "spelled", "unreadable_parameter"]

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
_COLLECTIONS = ("array", "dict")


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
    """Why a case's answer needs a parameter's text read in a way evalkit does not ('' if none): a
    collection given as one (BFCL parses any spelling of it with regular expressions that split on every
    comma), or a type BFCL's checker cannot read either (`Set`, `Queue`: it raises)."""
    declared = {f["name"]: f.get("parameters", {}).get("properties", {}) for f in functions}
    kinds = PYTHON_KIND[_KEY[category]]
    for entry in answer["ground_truth"]:
        for name, params in entry.items():
            for param, alts in params.items():
                kind = declared.get(name, {}).get(param, {}).get("type", "")
                if kind not in kinds:
                    return f"{name}.{param}: a {LANGUAGES[category]} {kind or 'untyped'} parameter BFCL cannot read"
                if kinds[kind] in _COLLECTIONS and not all(isinstance(a, str) for a in alts):
                    what = f"a {LANGUAGES[category]} {kind} given as one"
                    return f"{name}.{param}: {what} (BFCL parses any spelling of it with regular expressions)"
    return ""


_SUFFIX = {"java": {"long": "L", "float": "f"}, "javascript": {"Bigint": "n"}}


def spelled(value: Any, language: str, kind: str) -> Any:
    """A typed answer as the language spells it (the reference call's text): a Java `long` needs its `L`,
    a `float` its `f`, a JavaScript `Bigint` its `n`; a boolean is `true` or `false`; a float is written
    without an exponent (JavaScript's rule reads none)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        text = format(Decimal(repr(value)), "f") if isinstance(value, float) else str(value)
        if isinstance(value, float) and "." not in text:
            text += ".0"
        return text + _SUFFIX[language].get(kind, "")
    return value
