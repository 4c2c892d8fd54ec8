"""`rescue_parse`: recover tool calls that a model wrote as text (Forge's rescue parsing, PedroCLI's
parse strategies) and hand them on as real calls, recording every rescue as an intervention.

Formats tried, in order; the first that yields a call of an offered tool wins:

- `json`   — the whole reply is a call object or a list of them (also `parameters`/`args` keys,
             OpenAI's `{"function": {...}}`, string arguments, trailing commas, missing closers);
- `tagged` — `<tool_call>…</tool_call>` (or `<function_call>`) blocks, JSON or XML inside;
- `xml`    — Qwen-style `<function=name><parameter=x>v</parameter></function>` and
             `<invoke name="..."><parameter name="x">v</parameter></invoke>`;
- `fenced` — a fenced code block holding a call object or `name(key=value)`;
- `prose`  — a call object, or `name({...})` / `name(key="v")`, inside a sentence.

What must stay prose: only offered tools (including `respond`) are rescued, so a JSON example about
something else never becomes a call. An object is a call only if its keys are a call's keys (a tool
*definition* with a `description` or a JSON-schema `arguments` is not). Inside prose, a call also
needs all its required arguments and must not sit in a sentence that presents it as an example or
an offer ("for example", "would you like me to call ...", "don't call ...").

The rescued reply is passed on with `Rewrite`, so later guards judge it as calls: a rescued
`respond` is then `respond_tool`'s answer, not an execution. Put this guard first in the stack.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evalkit.chat import Completion, ToolCall, ToolSpec
from evalkit.strategies.base import BaseStrategy, Decision, Rewrite, TurnView

__all__ = ["FORMATS", "RescueParse", "rescue_calls"]

FORMATS = ("json", "tagged", "xml", "fenced", "prose")

_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "params")
_TAG = re.compile(r"<(tool_call|function_call|tool_calls)>(.*?)(?:</\1>|$)", re.DOTALL)
_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.DOTALL)
_XML_FUNCTION = re.compile(
    r"<(?:function\s*=\s*\"?([^\s>\"]+)\"?|invoke\s+name\s*=\s*\"([^\"]+)\")\s*>(.*?)(?:</(?:function|invoke)>|$)",
    re.DOTALL,
)
_XML_PARAMETER = re.compile(
    r"<parameter(?:\s*=\s*\"?([^\s>\"]+)\"?|\s+name\s*=\s*\"([^\"]+)\")\s*>(.*?)(?:</parameter>|(?=<parameter)|$)",
    re.DOTALL,
)
# a sentence that shows or offers a call rather than making it
_NOT_A_CALL = re.compile(
    r"\b(for example|example|e\.g\.|for instance|such as|looks like|look like|format|syntax|like this|"
    r"if you want|if you'd like|would you like|want me to|shall i|should i|you can (?:use|call)|"
    r"you could (?:use|call)|do not call|don't call|never call|instead of|without calling|"
    r"no need to|(?:don't|do not) need to|won't|will not|not going to)\b"
)
# `name(` candidates examined per reply, and the longest argument list read: each candidate scans
# forward for its closing parenthesis, so `f(f(f(…` would otherwise cost quadratic time
_MAX_SYNTAX_CANDIDATES = 32
_MAX_SYNTAX_CHARS = 8000
_LITERAL_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}

Extractor = Callable[[str, Mapping[str, ToolSpec]], list[ToolCall]]


# --- lenient JSON -----------------------------------------------------------------------------


def _loads(text: str) -> Any:
    """JSON, repaired for the slips small models make (trailing commas, missing closers, Python
    literals); None when it still does not parse."""
    text = text.strip()
    # as written first: a repair could change a string that happens to hold ", }"
    for candidate in (text, re.sub(r",\s*([}\]])", r"\1", text)):
        for attempt in (candidate, candidate + _missing_closers(candidate)):
            try:
                return json.loads(attempt)
            # ValueError: not JSON, or an integer past Python's digit limit; RecursionError: too deep
            except (ValueError, RecursionError):
                pass
    try:
        return _as_json(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):  # TypeError: {[1]: 2}
        return None


def _as_json(value: Any) -> Any:
    """A Python literal as the JSON value it stands for (tuples become lists); a set, bytes or a
    complex number is not an argument a tool can receive, so it raises ValueError."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, RecursionError) as exc:
        raise ValueError(f"not a JSON value: {type(value).__name__}") from exc


def _missing_closers(text: str) -> str:
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    # a string cut off mid-value is not repaired: closing it would invent the value
    return "" if in_string else "".join(reversed(stack))


# --- call objects -------------------------------------------------------------------------------


def _as_call(obj: Any, tools: Mapping[str, ToolSpec]) -> ToolCall | None:
    """A call of an offered tool if `obj` has exactly the shape of one, else None."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
        obj = {**{k: v for k, v in obj.items() if k != "function"}, **obj["function"]}
    name_key = next((k for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    arg_key = next((k for k in _ARG_KEYS if k in obj), None)
    # any other key (a `description`, a `returns`) makes it a definition or an example, not a call
    if name_key is None or set(obj) - {name_key, arg_key, "id", "type"}:
        return None
    tool = tools.get(obj[name_key])
    arguments = obj.get(arg_key, {}) if arg_key else {}
    if isinstance(arguments, str):
        arguments = _loads(arguments) if arguments.strip() else {}
    if tool is None or not isinstance(arguments, dict) or _echoes_schema(arguments, tool):
        return None
    return ToolCall(name=tool.name, arguments=arguments)


def _echoes_schema(arguments: dict[str, Any], tool: ToolSpec) -> bool:
    """`{"type": "object", "properties": {...}}` as arguments is the tool's definition, not a call."""
    declared = tool.parameters.get("properties") or {}
    return isinstance(arguments.get("properties"), dict) and "properties" not in declared


def _calls_in(value: Any, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    items = value if isinstance(value, list) else [value]
    return [c for c in (_as_call(item, tools) for item in items) if c is not None]


# --- extractors ---------------------------------------------------------------------------------


def _from_json(text: str, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    body = text.strip()
    return _calls_in(_loads(body), tools) if body[:1] in ("{", "[") else []


def _json_at(text: str, pos: int, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    """Calls in the JSON value that starts at `pos` (after whitespace), read to its own end: a
    closing tag or fence inside one of its strings does not cut it short."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if text[pos : pos + 1] not in ("{", "["):
        return []
    try:
        value, _ = json.JSONDecoder().raw_decode(text, pos)
    except (ValueError, RecursionError):
        return []
    return _calls_in(value, tools)


def _from_tags(text: str, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for match in _TAG.finditer(text):
        body = match.group(2)
        # last, the JSON read past the tag's end: a "</tool_call>" inside an argument cut the body short
        calls += _from_json(body, tools) or _from_xml(body, tools) or _json_at(text, match.start(2), tools)
    return calls


def _from_xml(text: str, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    calls = []
    for match in _XML_FUNCTION.finditer(text):
        tool = tools.get(match.group(1) or match.group(2))
        if tool is None:
            continue
        params = tool.parameters.get("properties") or {}
        arguments = {}
        for param in _XML_PARAMETER.finditer(match.group(3)):
            key = param.group(1) or param.group(2)
            arguments[key] = _xml_value(param.group(3).strip(), params.get(key))
        calls.append(ToolCall(name=tool.name, arguments=arguments))
    return calls


def _xml_value(raw: str, schema: Any) -> Any:
    """XML values are bare text: a string unless the parameter's schema says otherwise."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    looks_like_json = raw[:1] in ("{", "[", '"')
    if kind == "string" or (kind is None and not looks_like_json):
        return raw
    value = _loads(raw)
    # text that does not parse as the schema's type is still the model's value: kept as text
    return raw if value is None else value


def _from_fences(text: str, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for match in _FENCE.finditer(text):
        body = match.group(1)
        calls += (
            _from_json(body, tools)
            or _from_syntax(body, tools, in_prose=False)
            or _json_at(text, match.start(1), tools)
        )
    return calls


def _from_prose(text: str, tools: Mapping[str, ToolSpec]) -> list[ToolCall]:
    calls = [c for c, start in _embedded_objects(text, tools) if _meant_as_call(text, start, c, tools)]
    return calls or _from_syntax(text, tools, in_prose=True)


def _embedded_objects(text: str, tools: Mapping[str, ToolSpec]) -> Iterator[tuple[ToolCall, int]]:
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            pos = text.find("{", pos + 1)
            continue
        call = _as_call(value, tools)
        if call is not None:
            yield call, pos
            pos = text.find("{", end)
        else:
            pos = text.find("{", pos + 1)  # a non-call object may still contain a call


def _meant_as_call(text: str, start: int, call: ToolCall, tools: Mapping[str, ToolSpec]) -> bool:
    # the words just before the call, back to the end of the previous sentence
    sentence = re.split(r"[.!?](?:\s|$)", text[max(0, start - 160) : start])[-1].lower()
    required = tools[call.name].parameters.get("required") or []
    return not _NOT_A_CALL.search(sentence) and all(k in (call.arguments or {}) for k in required)


def _from_syntax(text: str, tools: Mapping[str, ToolSpec], *, in_prose: bool) -> list[ToolCall]:
    """`name({...})` or `name(key=value, ...)` for an offered tool name."""
    names = "|".join(re.escape(n) for n in sorted(tools, key=len, reverse=True))
    calls = []
    candidates = re.finditer(rf"(?<![\w.])({names})\s*\(", text)
    for match in itertools.islice(candidates, _MAX_SYNTAX_CANDIDATES):
        inner = _balanced(text, match.end())
        arguments = None if inner is None else _syntax_arguments(inner, tools[match.group(1)])
        if arguments is None:
            continue
        call = ToolCall(name=match.group(1), arguments=arguments)
        alone = text.strip() == f"{match.group(1)}({inner})"
        if not in_prose or alone or (arguments and _meant_as_call(text, match.start(), call, tools)):
            calls.append(call)
    return calls


def _balanced(text: str, start: int) -> str | None:
    """The text between the '(' before `start` and its matching ')', skipping quoted parts."""
    depth, quote, i = 1, "", start
    end = min(len(text), start + _MAX_SYNTAX_CHARS)
    while i < end:
        ch = text[i]
        if quote:
            i += 2 if ch == "\\" else 1
            quote = "" if ch == quote else quote
            continue
        if ch in "\"'":
            quote = ch
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if depth == 0:
            return text[start:i]
        i += 1
    return None


def _syntax_arguments(inner: str, tool: ToolSpec) -> dict[str, Any] | None:
    if inner.strip().startswith("{"):
        value = _loads(inner)
        return value if isinstance(value, dict) else None
    try:
        node = ast.parse(f"_f({inner})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return None
    props = list((tool.parameters.get("properties") or {}).keys())
    required = [k for k in tool.parameters.get("required") or [] if k in props]
    target = props if len(props) == 1 else required
    if node.args and (len(node.args) > 1 or len(target) != 1 or node.keywords):
        return None  # one positional argument is clear only when one parameter can take it
    pairs = [(target[0], node.args[0])] if node.args else [(str(k.arg), k.value) for k in node.keywords]
    out = {}
    for key, value in pairs:
        ok, literal = _literal(value)
        if not ok:
            return None
        out[key] = literal
    return out


def _literal(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Name) and node.id in _LITERAL_NAMES:
        return True, _LITERAL_NAMES[node.id]
    try:
        return True, _as_json(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


_EXTRACTORS: dict[str, Extractor] = {
    "json": _from_json,
    "tagged": _from_tags,
    "xml": _from_xml,
    "fenced": _from_fences,
    "prose": _from_prose,
}


def rescue_calls(
    text: str, tools: Mapping[str, ToolSpec], formats: tuple[str, ...] = FORMATS
) -> tuple[list[ToolCall], str] | None:
    """Calls of `tools` found in `text` by the first format that finds any, and that format."""
    for fmt in formats:
        found = _EXTRACTORS[fmt](text, tools)
        unique = list({json.dumps([c.name, c.arguments], sort_keys=True): c for c in found}.values())
        if unique:
            return unique, fmt  # ids stay empty: the loop numbers calls uniquely
    return None


@dataclass
class RescueParse(BaseStrategy):
    """Turn calls written as text into calls; leave prose alone."""

    name: ClassVar[str] = "rescue_parse"
    formats: list[str] = field(default_factory=lambda: list(FORMATS))

    def __post_init__(self) -> None:
        unknown = sorted(set(self.formats) - set(FORMATS))
        if unknown:
            raise ValueError(f"unknown format(s) {unknown}; known: {list(FORMATS)}")

    def judge(self, reply: Completion, view: TurnView) -> Decision | None:
        # a well-formed call needs no rescue; a strict-mode call that failed to parse may get one
        if (reply.tool_calls and not all(c.malformed for c in reply.tool_calls)) or not reply.text.strip():
            return None
        tools = {t.name: t for t in (view.offered or view.tools)}
        found = rescue_calls(reply.text, tools, tuple(self.formats)) if tools else None
        if found is None:
            return None
        calls, fmt = found
        rescued = reply.model_copy(update={"tool_calls": calls, "finish_reason": "tool_calls"})
        return Rewrite(rescued, note=f"rescued {', '.join(c.name for c in calls)} from {fmt}")
