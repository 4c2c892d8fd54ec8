"""Load-time checks of what a scenario declares: tool parameter schemas and argument specs.

A tool's `parameters` must be a valid JSON Schema (checked against draft 7's meta-schema: tool
schemas use nothing later, and draft 2020-12's meta-schema costs five times as much per check, which
a folder of imported BFCL scenarios pays hundreds of times) for an object whose `required`
names declared properties. Every argument spec (a mock's `when`, a check's `arguments`) must use
known operators (see `evalkit.scenario.matching`) and, where the tool declares properties, name only those
and have their shape (an object where the parameter is an object, never where it is a string: this
catches an operator written without its `$`). Reference calls are literal calls, with no operators.
Each problem comes back as '<field path>: <problem>' for the loader to place on a line.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import Any

from evalkit.scenario.matching import spec_problem

__all__ = ["literal_problem", "schema_problem", "spec_vs_schema_problem"]

_SHAPES = {dict: "object", list: "array", bool: "boolean"}


def schema_problem(schema: dict[str, Any], where: str) -> str | None:
    """The first reason `schema` is not a usable JSON Schema for tool arguments."""
    error = _meta_error(json.dumps(schema, sort_keys=True, default=str))
    if error is not None:
        path = ".".join([where, *error[0]])
        return f"{path}: not a valid JSON Schema: {error[1]}"
    if schema.get("type", "object") != "object":
        return f"{where}.type: tool parameters must be an object schema, not {schema.get('type')!r}"
    return _required_problem(schema, where)


@lru_cache(maxsize=4096)
def _meta_error(text: str) -> tuple[tuple[str, ...], str] | None:
    """(path, message) of the schema's first meta-schema error, by its JSON text: the tools of imported
    multi-turn scenarios repeat in every case, and a meta-schema check is the dearest part of loading."""
    from jsonschema.exceptions import best_match

    error = best_match(_meta_validator().iter_errors(json.loads(text)))
    return None if error is None else (tuple(str(p) for p in error.path), error.message)


@cache
def _meta_validator() -> Any:
    from jsonschema import Draft7Validator  # import late: not needed to run

    return Draft7Validator(Draft7Validator.META_SCHEMA)


def _required_problem(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(schema.get("required"), list):
        for i, name in enumerate(schema["required"]):
            if name not in properties:
                return f"{where}.required.{i}: {name!r} is not among the declared properties {sorted(properties)}"
    children = [(f"properties.{k}", v) for k, v in (properties or {}).items()] if isinstance(properties, dict) else []
    if "items" in schema:
        children.append(("items", schema["items"]))
    return next((p for key, sub in children if (p := _required_problem(sub, f"{where}.{key}"))), None)


def literal_problem(value: Any, where: str) -> str | None:
    """Reference arguments are what a model should send: no key may look like an operator."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and key.startswith("$"):
                return f"{where}.{key}: reference calls are literal arguments; no matcher operators"
            if problem := literal_problem(item, f"{where}.{key}"):
                return problem
    if isinstance(value, list):
        return next((p for i, item in enumerate(value) if (p := literal_problem(item, f"{where}.{i}"))), None)
    return None


def spec_vs_schema_problem(spec: Any, schema: Any, where: str) -> str | None:
    """Operators are known and literal parts fit the parameter schema's shape and property names."""
    problem = spec_problem(spec, where)
    if problem:
        return problem
    return _shape_problem(spec, schema if isinstance(schema, dict) else {}, where)


def _shape_problem(spec: Any, schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):  # `true` and `false` are JSON Schemas too; they declare no shape
        schema = {}
    if isinstance(spec, dict) and len(spec) == 1 and str(next(iter(spec))).startswith("$"):
        ((name, operand),) = spec.items()
        options = operand if name == "$any_of" else [operand] if name == "$optional" else []
        return next((p for i, o in enumerate(options) if (p := _shape_problem(o, schema, f"{where}.{name}"))), None)
    declared = schema.get("type")
    kind = next((label for t, label in _SHAPES.items() if isinstance(spec, t)), None)
    if kind and isinstance(declared, str) and declared != kind:
        hint = " (matcher operators start with $, e.g. {$contains: ...})" if kind == "object" else ""
        return f"{where}: {_article(kind)} {kind} where the parameter is {_article(declared)} {declared}{hint}"
    if isinstance(spec, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties and schema.get("additionalProperties") is not True:
            for key in spec:
                if key not in properties:
                    return f"{where}.{key}: not a declared parameter (declared: {sorted(properties)})"
        props = properties if isinstance(properties, dict) else {}
        return next((p for k, v in spec.items() if (p := _shape_problem(v, props.get(k, {}), f"{where}.{k}"))), None)
    if isinstance(spec, list) and isinstance(schema.get("items"), dict):
        return next((p for i, v in enumerate(spec) if (p := _shape_problem(v, schema["items"], f"{where}.{i}"))), None)
    return None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
