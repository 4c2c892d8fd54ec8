"""BFCL function docs as JSON Schema tools, the way BFCL shows them to function-calling models."""

from __future__ import annotations

import copy
import re
from typing import Any

__all__ = ["tool_name", "tool_schema"]

_GORILLA_TO_OPENAPI = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}


def tool_name(name: str) -> str:
    return re.sub(r"\.", "_", name)


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    # mirrors bfcl_eval.model_handler.utils._cast_to_openai_type (GORILLA_TO_OPENAPI)
    for value in properties.values():
        kind = value.get("type")
        if kind == "float":
            value["format"] = "float"
            value["description"] = value.get("description", "") + " This is a float type value."
        value["type"] = _GORILLA_TO_OPENAPI.get(kind, "string") if kind else "string"
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast(value["properties"])
            elif isinstance(value.get("items"), dict) and "type" in value["items"]:
                value["items"] = _cast({"_": value["items"]})["_"]
    return properties


def tool_schema(function: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc as an evalkit tool (name, description, JSON Schema parameters)."""
    params = copy.deepcopy(function.get("parameters", {}))
    params["type"] = "object"
    params["properties"] = _cast(params.get("properties", {}))
    return {"name": tool_name(function["name"]), "description": function.get("description", ""), "parameters": params}
