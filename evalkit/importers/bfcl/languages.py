"""BFCL's Java and JavaScript cases: every argument is a string, in the language's own spelling.

BFCL shows function-calling models these functions with every parameter typed `string` and a hint in
its description (`bfcl_eval.utils._func_doc_language_specific_pre_processing`); its checker parses
the string back into the typed value (`java_type_converter`, `js_type_converter`) and compares that
with the typed possible answer. evalkit keeps the strings typed (strict types: a number or boolean
where a string is declared fails, as in BFCL) and compares the text with the answer spelled as the
language spells it. Answers that are lists or objects are parsed by BFCL from any spelling; their
cases are skipped with that reason.
"""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["LANGUAGES", "language_answer", "language_functions"]

LANGUAGES = {"simple_java": "Java", "simple_javascript": "JavaScript"}


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


def _spelling(value: Any, kind: str) -> str | None:
    """The value as BFCL's Java/JavaScript converters read it back (a Java `long` needs its `L`, a Java
    `float` its `f`: without them BFCL reads the text as a string, not a number)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        text = json.dumps(value)
        return text + {"long": "L", "float": "f"}.get(kind, "")
    return value if isinstance(value, str) else None


def language_answer(answer: dict[str, Any], functions: list[dict[str, Any]]) -> dict[str, Any] | str:
    """The possible answer with every value as the language spells it, or why that cannot be said."""
    declared = {f["name"]: f.get("parameters", {}).get("properties", {}) for f in functions}
    out = copy.deepcopy(answer)
    for entry in out["ground_truth"]:
        for name, params in entry.items():
            for param, alts in params.items():
                kind = declared.get(name, {}).get(param, {}).get("type", "")
                spelled = [a if a == "" else _spelling(a, kind) for a in alts]
                if None in spelled:
                    return f"{name}.{param}: a list or object answer (BFCL parses any spelling of it)"
                params[param] = spelled
    return out
