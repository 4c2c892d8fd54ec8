"""Constraints that make a reply a valid call of an offered tool: a GBNF grammar and a JSON schema.

Both describe the harness's prompt-mode format (`evalkit.prompt_mode`): one JSON object
`{"name": "<tool>", "arguments": {...}}` (optionally a list of them), with one alternative per tool
and arguments that follow that tool's parameter schema (PedroCLI ADR-004, "multi-tool grammar").

Tool schemas are first reduced to a small subset (`normalize_schema`): objects with properties and
`required`, strings, numbers, integers, booleans, null, `enum`/`const`, arrays, `anyOf`/`oneOf` and
type lists. Anything else (`$ref`, `allOf`, `not`, patterns, ...) becomes "any JSON value", which is
looser than the tool's schema but never rejects a valid call. The GBNF and the JSON schema are built
from the same reduced schema, so the `grammar` and `schema` modes constrain the same language.

The grammar follows llama.cpp's parser (src/llama-grammar.cpp): rule names are `[a-zA-Z0-9-]+`, one
rule per line, literals escape `"` and `\\`, and every repetition is bounded (whitespace, digits and,
optionally, string length) so a small model cannot loop on padding until the token limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from evalkit.chat import ToolSpec

__all__ = ["gbnf_literal", "normalize_schema", "tool_call_grammar", "tool_call_schema"]

# JSON primitives, after llama.cpp's json-schema-to-grammar (PRIMITIVE_RULES, SPACE_RULE).
_PRIMITIVES: dict[str, str] = {
    "ws": '| " " | "\\n" [ \\t]{0,20}',
    "json-char": '[^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "json-int-part": "[0] | [1-9] [0-9]{0,15}",
    "json-integer": '"-"? json-int-part',
    "json-number": '"-"? json-int-part ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,4})?',
    "json-boolean": '"true" | "false"',
    "json-null": '"null"',
    "json-value": "json-object | json-array | json-string | json-number | json-boolean | json-null",
    "json-object": '"{" ws (json-string ws ":" ws json-value (ws "," ws json-string ws ":" ws json-value)* ws)? "}"',
    "json-array": '"[" ws (json-value (ws "," ws json-value)* ws)? "]"',
}
_DEPENDS: dict[str, tuple[str, ...]] = {
    "json-integer": ("json-int-part",),
    "json-number": ("json-int-part",),
    "json-string": ("json-char",),
    "json-value": ("json-object", "json-array", "json-string", "json-number", "json-boolean", "json-null"),
    "json-object": ("ws", "json-string", "json-value"),
    "json-array": ("ws", "json-value"),
}
_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
ANY: dict[str, Any] = {}


def gbnf_literal(text: str) -> str:
    """`text` as a GBNF string literal (llama.cpp's parse_char escapes)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _json_literal(value: Any) -> str:
    return gbnf_literal(json.dumps(value, ensure_ascii=False))


# --- schema reduction --------------------------------------------------------------------------


def normalize_schema(schema: Any) -> dict[str, Any]:
    """Reduce a JSON schema to the subset both builders understand; unknown parts become ANY."""
    if not isinstance(schema, dict):
        return dict(ANY)
    if "const" in schema:
        return {"const": schema["const"]}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return {"enum": list(schema["enum"])}
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _alternatives([normalize_schema(s) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _alternatives([normalize_schema({**schema, "type": k}) for k in kind])
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    return _normalize_typed(schema, kind)


def _alternatives(options: list[dict[str, Any]]) -> dict[str, Any]:
    # one ANY alternative makes the whole union ANY
    return dict(ANY) if any(not o for o in options) else {"anyOf": options}


def _normalize_typed(schema: dict[str, Any], kind: Any) -> dict[str, Any]:
    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, dict):
            return {"type": "object"}  # free-form object
        required = [k for k in schema.get("required", []) if isinstance(k, str) and k in props]
        return {
            "type": "object",
            "properties": {str(k): normalize_schema(v) for k, v in props.items()},
            "required": required,
            "additionalProperties": False,
        }
    if kind == "array":
        items = schema.get("items")
        return {"type": "array", "items": normalize_schema(items)} if isinstance(items, dict) else {"type": "array"}
    if kind in _TYPES:
        return {"type": kind}
    return dict(ANY)


# --- JSON schema form --------------------------------------------------------------------------


def _call_schema(tool: ToolSpec, max_string_chars: int | None) -> dict[str, Any]:
    arguments = _limit_strings(normalize_schema(tool.parameters), max_string_chars)
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _limit_strings(schema: dict[str, Any], limit: int | None) -> dict[str, Any]:
    if limit is None:
        return schema
    if schema.get("type") == "string":
        return {**schema, "maxLength": limit}
    out = dict(schema)
    if "properties" in out:
        out["properties"] = {k: _limit_strings(v, limit) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _limit_strings(out["items"], limit)
    if "anyOf" in out:
        out["anyOf"] = [_limit_strings(s, limit) for s in out["anyOf"]]
    return out


def tool_call_schema(
    tools: Sequence[ToolSpec], *, parallel: bool = False, max_string_chars: int | None = None
) -> dict[str, Any]:
    """The JSON schema of one call (`oneOf` per tool), or of one call or a non-empty list of calls."""
    if not tools:
        raise ValueError("a tool-call schema needs at least one tool")
    call = {"oneOf": [_call_schema(t, max_string_chars) for t in tools]}
    if not parallel:
        return call
    return {"anyOf": [call, {"type": "array", "items": call, "minItems": 1}]}


# --- GBNF form ---------------------------------------------------------------------------------


class _Builder:
    """Accumulates rules; `expr` turns a reduced schema into a GBNF expression."""

    def __init__(self, max_string_chars: int | None):
        self.rules: dict[str, str] = {}
        self.max_string_chars = max_string_chars

    def primitive(self, name: str) -> str:
        if name not in self.rules:
            repeat = "*" if self.max_string_chars is None else f"{{0,{self.max_string_chars}}}"
            self.rules[name] = f'"\\"" json-char{repeat} "\\""' if name == "json-string" else _PRIMITIVES[name]
            for dependency in _DEPENDS.get(name, ()):
                self.primitive(dependency)
        return name

    def add(self, hint: str, body: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9]+", "-", hint).strip("-").lower() or "rule"
        name, n = base, 2
        while name in self.rules or name in _PRIMITIVES or name in ("root", "call"):
            name, n = f"{base}-{n}", n + 1
        self.rules[name] = body
        return name

    def expr(self, schema: dict[str, Any], hint: str) -> str:
        if "const" in schema:
            return self.value(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(self.value(v) for v in schema["enum"]) + ")"
        if "anyOf" in schema:
            options = [self.expr(s, f"{hint}-{i}") for i, s in enumerate(schema["anyOf"])]
            return "(" + " | ".join(options) + ")"
        kind = schema.get("type")
        if kind == "object" and "properties" in schema:
            return self.add(hint, self.object_body(schema, hint))
        if kind == "array" and "items" in schema:
            item = self.expr(schema["items"], f"{hint}-item")
            self.primitive("ws")
            return self.add(hint, f'"[" ws ({item} (ws "," ws {item})* ws)? "]"')
        return self.primitive(f"json-{kind}" if kind in _TYPES else "json-value")

    def value(self, value: Any) -> str:
        """Exactly this JSON value, with the same freedom of whitespace as everywhere else."""
        if isinstance(value, dict) and value:
            self.primitive("ws")
            pairs = [f'{_json_literal(k)} ws ":" ws {self.value(v)}' for k, v in value.items()]
            return '("{" ws ' + ' ws "," ws '.join(pairs) + ' ws "}")'
        if isinstance(value, list) and value:
            self.primitive("ws")
            return '("[" ws ' + ' ws "," ws '.join(self.value(v) for v in value) + ' ws "]")'
        if value == {} or value == []:
            self.primitive("ws")
            return '("{" ws "}")' if value == {} else '("[" ws "]")'
        return _json_literal(value)

    def object_body(self, schema: dict[str, Any], hint: str) -> str:
        """Properties in declaration order; required ones must appear, optional ones may not."""
        self.primitive("ws")
        props = list(schema["properties"].items())
        if not props:
            return '"{" ws "}"'
        required = set(schema["required"])
        pairs = [f'{_json_literal(k)} ws ":" ws {self.expr(v, f"{hint}-{k}")}' for k, v in props]
        flags = [k in required for k, _ in props]
        body = self.start(pairs, flags, 0, hint)
        if any(flags):
            return f'"{{" ws {body} ws "}}"'
        return f'"{{" ws ({body} ws)? "}}"'

    def start(self, pairs: list[str], flags: list[bool], i: int, hint: str) -> str:
        """A non-empty run of properties starting at index i or later (nothing emitted before it)."""
        rest = [
            f'ws "," ws {p}' if required else f'(ws "," ws {p})?'
            for p, required in zip(pairs[i + 1 :], flags[i + 1 :], strict=True)
        ]
        here = " ".join([pairs[i], *rest])
        if flags[i] or i + 1 == len(pairs):
            return here
        # optional property i may be absent: then the object starts at a later property
        later = self.add(f"{hint}-from-{i + 1}", self.start(pairs, flags, i + 1, hint))
        return f"({here} | {later})"


def _call_rule(builder: _Builder, index: int, tool: ToolSpec) -> str:
    hint = f"tool-{index}-{tool.name}"
    arguments = builder.expr(normalize_schema(tool.parameters), f"{hint}-args")
    body = (
        f'"{{" ws "\\"name\\"" ws ":" ws {_json_literal(tool.name)} ws "," ws '
        f'"\\"arguments\\"" ws ":" ws {arguments} ws "}}"'
    )
    return builder.add(hint, body)


def tool_call_grammar(
    tools: Sequence[ToolSpec], *, parallel: bool = False, allow_text: bool = False, max_string_chars: int | None = None
) -> str:
    """A GBNF grammar whose language is exactly the calls of `tools` in the harness format.

    `parallel` also allows a JSON list of calls. `allow_text` adds plain text as an alternative
    (ADR-004's text-or-tool grammar); text may not start with `{`, `[` or `<`, so it can never be
    mistaken for a call. `max_string_chars` bounds every JSON string.
    """
    if not tools:
        raise ValueError("a tool-call grammar needs at least one tool")
    builder = _Builder(max_string_chars)
    builder.primitive("ws")
    alternatives = [_call_rule(builder, i, tool) for i, tool in enumerate(tools)]
    root = ["call", '"[" ws call (ws "," ws call)* ws "]"'] if parallel else ["call"]
    if allow_text:
        root.append("[^{[<\\x00-\\x20] [^\\x00]*")
    head = {"root": " | ".join(root), "call": " | ".join(alternatives)}
    return "".join(f"{name} ::= {body}\n" for name, body in {**head, **builder.rules}.items())
