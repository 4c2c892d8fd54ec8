"""The tool-call grammar is valid llama.cpp GBNF and its language is exactly the offered calls.

The grammar is checked with `gbnf_checker`, a port of llama.cpp's grammar parser and a matcher; the
checker itself is checked against llama.cpp's own grammar tests when the llama.cpp sources are on
this machine (`test_checker_agrees_with_llama_cpp_tests`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.chat import ToolSpec
from evalkit.scenario.model import load_scenario
from evalkit.strategies.gbnf import gbnf_literal, normalize_schema, tool_call_grammar, tool_call_schema
from tests.strategies.gbnf_checker import GbnfError, parse_gbnf

ROOT = Path(__file__).resolve().parents[2]


def obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or []}


S, INT, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}

TRICKY = [
    ToolSpec(name="get_weather", parameters=obj({"city": S, "units": {"enum": ["c", "f"]}}, ["city"])),
    ToolSpec(name="respond", parameters=obj({"message": S}, ["message"])),
    ToolSpec(name="no_params"),
    ToolSpec(name="free_form", parameters={"type": "object"}),
    ToolSpec(name="all_optional", parameters=obj({"a": B, "b": {"type": "array", "items": N}, "c": INT})),
    ToolSpec(name="interleaved", parameters=obj({"o1": S, "r1": INT, "o2": B, "r2": S, "o3": N}, ["r1", "r2"])),
    ToolSpec(
        name="nested",
        parameters=obj(
            {
                "filter": obj(
                    {"tags": {"type": "array", "items": S}, "range": obj({"lo": N, "hi": N}, ["lo"])}, ["tags"]
                ),
                "rows": {"type": "array", "items": obj({"id": INT}, ["id"])},
            },
            ["filter"],
        ),
    ),
    ToolSpec(
        name="unions",
        parameters=obj(
            {
                "maybe": {"type": ["string", "null"]},
                "either": {"anyOf": [INT, {"enum": ["auto"]}]},
                "fixed": {"const": {"v": 1}},
                "mixed_enum": {"enum": [1, "two", None, True, 2.5]},
            },
            ["either"],
        ),
    ),
    ToolSpec(
        name="fallbacks",
        parameters=obj(
            {
                "ref": {"$ref": "#/defs/x"},
                "all": {"allOf": [S, S]},
                "pattern": {"type": "string", "pattern": "^[a-z]+$"},
                "any": {},
                "extra": {"type": "object", "additionalProperties": S},
            },
            ["ref"],
        ),
    ),
    ToolSpec(
        name='we"ird\\näme-ü',
        parameters=obj({'key "quoted"': S, "spaced key": INT, "ключ": B, "emoji 🔑": S}, ['key "quoted"']),
    ),
    ToolSpec(
        name="required_not_declared", parameters={"type": "object", "properties": {"x": S}, "required": ["x", "ghost"]}
    ),
    ToolSpec(name="empty_enum", parameters=obj({"e": {"enum": []}, "t": {"type": "tuple"}})),
    ToolSpec(name="get-weather", parameters=obj({"city": S}, ["city"])),  # same rule slug as get_weather
]


def scenario_tools() -> list[ToolSpec]:
    tools: dict[str, ToolSpec] = {}
    for path in sorted(ROOT.glob("scenarios/*/*.yaml")):
        for tool in load_scenario(path).tools:
            tools.setdefault(tool.name, tool.spec())
    return list(tools.values())


def example(schema: dict[str, Any], full: bool = True) -> Any:
    """A valid instance of a reduced schema: every property (full) or only the required ones."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][-1]
    if "anyOf" in schema:
        return example(schema["anyOf"][0], full)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {"k": {}})
        keep = [k for k in props if full or k in schema.get("required", [])]
        return {k: example(props[k], full) for k in keep}
    if kind == "array" and "items" in schema:
        return [example(schema["items"], full), example(schema["items"], full)]
    values = {"array": [], "string": 'a "b" \\ é\n', "number": -1.5e3, "integer": 42, "boolean": False, "null": None}
    return values.get(str(kind), {"any": [1, "x", None]})  # no type: any JSON value


def render(name: str, arguments: Any, style: int) -> str:
    call = {"name": name, "arguments": arguments}
    if style == 0:
        return json.dumps(call, ensure_ascii=False)
    if style == 1:
        return json.dumps(call, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(call, ensure_ascii=False, indent=2)


def valid(value: Any, schema: dict[str, Any]) -> bool:
    """A validator for the reduced schema subset (the JSON-schema form of the same constraint)."""
    if "const" in schema:
        return bool(value == schema["const"])
    if "enum" in schema:
        return any(value == v and type(value) is type(v) for v in schema["enum"])
    if "anyOf" in schema:
        return any(valid(value, s) for s in schema["anyOf"])
    kind = schema.get("type")
    checks: dict[str, Any] = {"string": str, "boolean": bool, "null": type(None), "array": list, "object": dict}
    if kind in ("integer", "number"):
        ok = isinstance(value, int) if kind == "integer" else isinstance(value, (int, float))
        return ok and not isinstance(value, bool)
    if kind is None:
        return True
    if not isinstance(value, checks[kind]):
        return False
    if kind == "array":
        return all(valid(v, schema.get("items", {})) for v in value)
    if kind == "object" and "properties" in schema:
        props = schema["properties"]
        return (
            set(value) <= set(props)
            and set(schema["required"]) <= set(value)
            and all(valid(v, props[k]) for k, v in value.items())
        )
    return True


@pytest.mark.parametrize("tool", TRICKY + scenario_tools(), ids=lambda t: t.name)
def test_grammar_is_valid_gbnf_and_accepts_every_valid_call(tool: ToolSpec) -> None:
    grammar = parse_gbnf(tool_call_grammar([tool]))
    schema = normalize_schema(tool.parameters)
    for full in (True, False):
        arguments = example(schema, full)
        assert valid(arguments, schema)
        for style in (0, 1, 2):
            text = render(tool.name, arguments, style)
            assert grammar.matches(text), text


def test_every_scenario_tool_set_gives_a_valid_grammar_with_respond() -> None:
    respond = ToolSpec(name="respond", parameters=obj({"message": S}, ["message"]))
    for path in sorted(ROOT.glob("scenarios/*/*.yaml")):
        tools = [t.spec() for t in load_scenario(path).tools] + [respond]
        grammar = parse_gbnf(tool_call_grammar(tools, parallel=True, max_string_chars=500))
        assert grammar.matches(render("respond", {"message": "Hello!"}, 0)), path


def test_grammar_rejects_hallucinated_names_wrong_types_and_extra_keys() -> None:
    grammar = parse_gbnf(tool_call_grammar(TRICKY))
    rejected = [
        render("get_wether", {"city": "Paris"}, 0),  # hallucinated tool
        render("search_web", {}, 0),
        render("get_weather", {}, 0),  # missing required
        render("get_weather", {"city": 3}, 0),  # wrong type
        render("get_weather", {"city": "Paris", "units": "kelvin"}, 0),  # not in enum
        render("get_weather", {"city": "Paris", "country": "FR"}, 0),  # undeclared property
        render("no_params", {"x": 1}, 0),
        render("interleaved", {"r1": 1.5, "r2": "x"}, 0),  # integer expected
        render("nested", {"filter": {"tags": ["a"], "range": {"hi": 2}}}, 0),  # nested required
        render("unions", {"either": "manual"}, 0),
        '{"arguments": {"city": "Paris"}, "name": "get_weather"}',  # the harness format fixes the order
        'Sure! {"name": "get_weather", "arguments": {"city": "Paris"}}',  # prose around the call
        '{"name": "get_weather", "arguments": {"city": "Paris"}} trailing',
        '{"name": "get_weather", "arguments": {"city": "Par',  # truncated
        "Hello, how can I help?",  # text is not allowed without allow_text
    ]
    for text in rejected:
        assert not grammar.matches(text), text


def test_interleaved_optional_properties_keep_declaration_order() -> None:
    grammar = parse_gbnf(tool_call_grammar(TRICKY))
    assert grammar.matches(render("interleaved", {"o1": "a", "r1": 1, "r2": "b"}, 0))
    assert grammar.matches(render("interleaved", {"r1": 1, "o2": True, "r2": "b", "o3": 1}, 0))
    assert not grammar.matches(render("interleaved", {"r2": "b", "r1": 1}, 0))
    assert grammar.matches(render("all_optional", {}, 0))
    assert grammar.matches(render("all_optional", {"c": 1}, 0))
    assert not grammar.matches('{"name": "all_optional", "arguments": {, "c": 1}}')


def test_same_slug_tool_names_get_distinct_rules() -> None:
    text = tool_call_grammar(TRICKY)
    grammar = parse_gbnf(text)
    assert grammar.matches(render("get-weather", {"city": "x"}, 0))
    assert grammar.matches(render("get_weather", {"city": "x"}, 0))
    rule_names = [line.split(" ::= ")[0] for line in text.splitlines()]
    assert len(rule_names) == len(set(rule_names))


def test_parallel_and_text_alternatives() -> None:
    one = render("get_weather", {"city": "Oslo"}, 0)
    plain = parse_gbnf(tool_call_grammar(TRICKY[:2]))
    both = parse_gbnf(tool_call_grammar(TRICKY[:2], parallel=True, allow_text=True))
    listed = f"[{one}, {render('respond', {'message': 'hi'}, 0)}]"
    assert not plain.matches(listed) and both.matches(listed)
    assert both.matches("The answer is 12.") and not both.matches("{not a call")
    assert not both.matches("[]") and not both.matches(" leading space")


def test_max_string_chars_bounds_strings() -> None:
    grammar = parse_gbnf(tool_call_grammar(TRICKY[:1], max_string_chars=5))
    assert grammar.matches(render("get_weather", {"city": "Paris"}, 0))
    assert not grammar.matches(render("get_weather", {"city": "Parisss"}, 0))


def test_whitespace_is_bounded() -> None:
    grammar = parse_gbnf(tool_call_grammar(TRICKY[:1]))
    assert grammar.matches('{"name": "get_weather",\n    "arguments": {"city": "x"}}')
    assert not grammar.matches('{"name": "get_weather",' + "\n" + " " * 21 + '"arguments": {"city": "x"}}')
    assert not grammar.matches('{"name":   "get_weather", "arguments": {"city": "x"}}')


def test_schema_form_has_one_branch_per_tool_and_matches_the_grammar() -> None:
    schema = tool_call_schema(TRICKY)
    branches = schema["oneOf"]
    assert [b["properties"]["name"]["const"] for b in branches] == [t.name for t in TRICKY]
    assert all(b["required"] == ["name", "arguments"] and b["additionalProperties"] is False for b in branches)
    grammar = parse_gbnf(tool_call_grammar(TRICKY))
    for tool, branch in zip(TRICKY, branches, strict=True):
        arguments_schema = branch["properties"]["arguments"]
        for full in (True, False):
            arguments = example(arguments_schema, full)
            assert valid(arguments, arguments_schema)
            assert grammar.matches(render(tool.name, arguments, 0))


def test_schema_form_parallel_and_string_limit() -> None:
    schema = tool_call_schema(TRICKY[:1], parallel=True, max_string_chars=9)
    call, many = schema["anyOf"]
    assert many == {"type": "array", "items": call, "minItems": 1}
    city = call["oneOf"][0]["properties"]["arguments"]["properties"]["city"]
    assert city == {"type": "string", "maxLength": 9}


def test_normalize_reduces_unknown_parts_to_any() -> None:
    assert normalize_schema({"$ref": "#/x"}) == {}
    assert normalize_schema({"allOf": [S]}) == {}
    assert normalize_schema({"type": ["string", "null"]}) == {"anyOf": [S, {"type": "null"}]}
    assert normalize_schema({"anyOf": [S, {}]}) == {}
    assert normalize_schema({"properties": {"a": S}})["type"] == "object"
    assert normalize_schema({"type": "string", "pattern": "x", "format": "date"}) == S
    assert normalize_schema("not a schema") == {}
    assert normalize_schema({"type": "object", "properties": {"x": S}, "required": ["x", "y", 3]})["required"] == ["x"]


def test_gbnf_literal_escapes() -> None:
    assert gbnf_literal('a"b\\c\nd\x01') == '"a\\"b\\\\c\\nd\\x01"'
    tricky = 'a"b]\\[ é\t'
    assert parse_gbnf("root ::= " + gbnf_literal(tricky)).matches(tricky)


def test_no_tools_is_an_error() -> None:
    with pytest.raises(ValueError):
        tool_call_grammar([])
    with pytest.raises(ValueError):
        tool_call_schema([])


# --- the checker itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, reason",
    [
        ('root ::= "a" | root "a"', "left recursion"),
        (
            'root ::= asdf\nasdf ::= "a" | foo "b"\nfoo ::= "c" | empty asdf "d" | "e"\nempty ::= "blah" | ',
            "left recursion",
        ),
        ("root ::= foo", "Undefined rule"),
        ('foo ::= "a"', "root"),
        ('my_rule ::= "a"\nroot ::= my_rule', "expecting ::="),  # underscores are not rule-name characters
        ('root ::= "a"\n  "b"', "expecting name"),
        ('root ::= "a', "unexpected end"),
        ("root ::= [a-", "unexpected end"),
        ('root ::= "\\q"', "unknown escape"),
        ('root ::= "a"{5000}', "sane defaults"),
        ("root ::= (((((([^x]*){0,99}){0,99}){0,99}){0,99}){0,99}){0,99}", "sane defaults"),
        ('root ::= ("a"', r"expecting '\)'"),
        ("root ::= *", "preceding item"),
    ],
)
def test_checker_rejects_what_llama_cpp_rejects(text: str, reason: str) -> None:
    with pytest.raises(GbnfError, match=reason):
        parse_gbnf(text)


# llama.cpp's own grammar files and test vectors, vendored (see tests/data/llama_cpp/README.md)
LLAMA_CPP = Path(__file__).resolve().parents[1] / "data" / "llama_cpp"


def test_checker_parses_llama_cpp_example_grammars() -> None:
    paths = sorted((LLAMA_CPP / "grammars").glob("*.gbnf"))
    assert len(paths) >= 8
    for path in paths:
        parse_gbnf(path.read_text(encoding="utf-8"))


def test_checker_agrees_with_llama_cpp_tests() -> None:
    from tests.strategies.llama_vectors import grammar_cases

    cases = [c for c in grammar_cases(LLAMA_CPP / "tests/test-grammar-integration.cpp") if "<" not in c[1]]
    assert len(cases) >= 10
    for desc, text, passing, failing in cases:
        grammar = parse_gbnf(text)
        assert all(grammar.matches(s) for s in passing), desc
        assert not any(grammar.matches(s) for s in failing), desc
