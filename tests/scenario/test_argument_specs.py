"""Load-time checks of tool schemas and argument specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ScenarioError
from evalkit.scenario.model import load_scenario

BASE = """\
id: weather
family: sequential_reasoning
turns: ["weather in Paris on friday?"]
tools:
  - name: get_weather
    parameters:
      type: object
      properties: {city: {type: string}, day: {type: string}}
      required: [city]
    results:
      - when: {city: Paris}
        returns: {sky: clear}
reference:
  calls: [{name: get_weather, arguments: {city: Paris, day: friday}}]
  reply: Clear.
check:
  calls:
    required: [{name: get_weather, arguments: {city: paris}}]
"""


def error_of(write, text: str) -> ScenarioError:  # type: ignore[no-untyped-def]
    with pytest.raises(ScenarioError) as info:
        load_scenario(write("s.yaml", text))
    return info.value


def test_the_base_scenario_loads(write) -> None:  # type: ignore[no-untyped-def]
    assert load_scenario(write("s.yaml", BASE)).tools[0].name == "get_weather"


@pytest.mark.parametrize(
    ("old", "new", "field", "line", "words"),
    [
        ("city: {type: string}", "city: {type: dict}", "tools.0.parameters.properties.city.type", 8, "JSON Schema"),
        ("city: {type: string}", "city: {type: float}", "tools.0.parameters.properties.city.type", 8, "JSON Schema"),
        ("required: [city]", "required: [city, country]", "tools.0.parameters.required.1", 9, "'country'"),
    ],
)
def test_invalid_parameter_schemas_are_load_errors(write, old, new, field, line, words) -> None:  # type: ignore[no-untyped-def]
    err = error_of(write, BASE.replace(old, new))
    assert err.field == field and err.line == line and words in err.problem
    assert str(err).startswith(f"{err.path}:{line}: {field}: ")


def test_an_unknown_matcher_operator_is_a_load_error(write) -> None:  # type: ignore[no-untyped-def]
    err = error_of(write, BASE.replace("when: {city: Paris}", "when: {day: {$startswith: fri}}"))
    assert err.field == "tools.0.results.0.when.day" and err.line == 11 and "$startswith" in err.problem


def test_the_issue_input_when_startswith_is_a_load_error(write) -> None:  # type: ignore[no-untyped-def]
    err = error_of(write, BASE.replace("when: {city: Paris}", "when: {startswith: fri}"))
    assert err.field == "tools.0.results.0.when.startswith" and "not a declared parameter" in err.problem
    err = error_of(write, BASE.replace("when: {city: Paris}", "when: {day: {startswith: fri}}"))
    assert err.field == "tools.0.results.0.when.day" and "operators start with $" in err.problem


def test_checks_and_references_are_checked_too(write) -> None:  # type: ignore[no-untyped-def]
    err = error_of(write, BASE.replace("arguments: {city: paris}", "arguments: {city: {$regex: '('}}"))
    assert err.field == "check.calls.required.0.arguments.city" and err.line == 18
    err = error_of(write, BASE.replace("day: friday}", "day: {$contains: fri}}"))
    assert err.field.startswith("reference.calls.0.arguments.day") and "literal" in err.problem
    err = error_of(write, BASE.replace("day: friday}", "dya: friday}"))
    assert err.field == "reference.calls.0.arguments.dya" and "not a declared parameter" in err.problem


def test_a_yaml_1_1_boolean_in_required_is_caught(repo_root: Path, write) -> None:  # type: ignore[no-untyped-def]
    text = BASE.replace("required: [city]", "required: [city, on]")
    text = text.replace("day: {type: string}", "on: {type: boolean}")
    err = error_of(write, text)
    assert err.field == "tools.0.parameters.required.1" and "True is not of type 'string'" in err.problem
