"""Scenario format v2 call checks: extra arguments, count, extra_calls, any_of, match rules (with the
matcher's $optional/$absent) at every depth; v1 scenarios keep their v1 checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.chat import ToolCall
from evalkit.judge.calls import uses_v2
from evalkit.judge.verdict import judge_run
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario, load_scenarios

ROOT = Path(__file__).resolve().parents[2]


def scenario(calls: dict[str, Any], match: dict[str, Any] | None = None) -> Scenario:
    props = {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "tags": {"type": "array"},
        "unit": {"type": "string"},
        "where": {"type": "object"},
    }
    doc: dict[str, Any] = {
        "schema_version": 2,
        "id": "v2",
        "family": "tool_selection",
        "turns": ["weather?"],
        "tools": [
            {"name": "weather", "parameters": {"type": "object", "properties": props}},
            {"name": "news", "parameters": {"type": "object", "properties": {}}},
        ],
        "reference": {"calls": []},
        "check": {"calls": calls},
    }
    if match:
        doc["check"]["match"] = match
    return Scenario.model_validate(doc)


def correct(s: Scenario, *calls: tuple[str, dict[str, Any]]) -> bool:
    done = [execute_call(s, ToolCall(id=f"c{i}", name=n, arguments=a)) for i, (n, a) in enumerate(calls)]
    return judge_run(s, "terminal_tool", done, None).correct


def test_optional_absent_and_extra_arguments() -> None:
    want = {"name": "weather", "arguments": {"city": "Paris", "unit": {"$optional": "C"}, "days": {"$absent": True}}}
    s = scenario({"required": [want]})
    assert correct(s, ("weather", {"city": "Paris"}))
    assert correct(s, ("weather", {"city": "Paris", "unit": "c", "tags": []}))
    assert not correct(s, ("weather", {"city": "Paris", "unit": "F"}))
    assert not correct(s, ("weather", {"city": "Paris", "days": 3}))
    s = scenario({"required": [want | {"extra_arguments": "forbid"}]})
    assert not correct(s, ("weather", {"city": "Paris", "tags": []}))


def test_required_calls_are_one_to_one_and_extra_calls_can_be_forbidden() -> None:
    twice = {"required": [{"name": "weather", "arguments": {"city": "Paris"}}] * 2, "order": "unordered"}
    assert not correct(scenario(twice), ("weather", {"city": "Paris"}))
    assert correct(scenario(twice), ("weather", {"city": "Paris"}), ("weather", {"city": "paris"}))
    once = {"required": [{"name": "weather", "arguments": {"city": "Paris"}}], "extra_calls": "forbid"}
    assert correct(scenario(once), ("weather", {"city": "Paris"}))
    assert not correct(scenario(once), ("weather", {"city": "Paris"}), ("weather", {"city": "Paris"}))


def test_count_is_exact() -> None:
    s = scenario({"required": [{"name": "weather", "arguments": {"city": "Paris"}, "count": 2}]})
    assert not correct(s, ("weather", {"city": "Paris"}))
    assert correct(s, ("weather", {"city": "Paris"}), ("weather", {"city": "Paris"}))
    assert not correct(s, *[("weather", {"city": "Paris"})] * 3)


def test_any_of_tools() -> None:
    s = scenario({"any_of": ["weather", "news"]})
    assert correct(s, ("news", {}))
    assert not correct(s)


@pytest.mark.parametrize(
    ("normalise", "given", "ok"),
    [
        ("exact", ["Paris"], True),
        ("exact", ["paris"], False),
        ("casefold", [" PARIS "], True),
        ("casefold", ["Pa-ris"], False),
        ("bfcl", ["pa-ris."], True),
        ("bfcl", ["Rome"], False),
    ],
)
def test_normalisation_holds_inside_lists(normalise: str, given: list[str], ok: bool) -> None:
    s = scenario({"required": [{"name": "weather", "arguments": {"tags": ["Paris"]}}]}, {"normalise": normalise})
    assert correct(s, ("weather", {"tags": given})) is ok


@pytest.mark.parametrize(
    ("value", "strict_ok", "lenient_ok"),
    [(3, True, True), (3.0, False, True), ("3", False, True), (True, False, False)],
)
def test_type_strictness(value: Any, strict_ok: bool, lenient_ok: bool) -> None:
    calls = {"required": [{"name": "weather", "arguments": {"days": 3}, "extra_arguments": "forbid"}]}
    assert correct(scenario(calls, {"strict_types": True}), ("weather", {"days": value})) is strict_ok
    assert correct(scenario(calls, {"strict_types": False}), ("weather", {"days": value})) is lenient_ok


def test_nested_object_with_per_key_alternatives_and_optional_keys() -> None:
    spec = {"city": {"$any_of": ["Paris", "Lutetia"]}, "unit": {"$optional": "C"}}
    s = scenario(
        {"required": [{"name": "weather", "arguments": {"where": spec}, "extra_arguments": "forbid"}]},
        {"normalise": "bfcl"},
    )
    assert correct(s, ("weather", {"where": {"city": "lutetia"}}))
    assert correct(s, ("weather", {"where": {"city": "Paris", "unit": "c"}}))
    assert not correct(s, ("weather", {"where": {"city": "Paris", "wind": 1}}))


def test_committed_v1_scenarios_keep_v1_checks() -> None:
    """Every scenario outside scenarios/bfcl/ and scenarios/bfcl-wide/ (imported BFCL cases) is judged by the
    v1 path, so its verdicts are unchanged."""
    imported = ("scenarios/bfcl/", "scenarios/bfcl-wide/")
    paths = [
        p
        for p in sorted((ROOT / "scenarios").rglob("*.yaml"))
        if not p.relative_to(ROOT).as_posix().startswith(imported)
    ]
    assert len(paths) >= 16
    assert not any(uses_v2(s) or s.end_after_calls for s in load_scenarios(paths))
