"""`evalkit validate` runs each scenario's reference through its own mocks and check."""

from __future__ import annotations

from evalkit.cli import main
from evalkit.judge.reference_check import reference_problems
from evalkit.scenario.model import load_scenario
from tests.extras import shipped_scenarios, skip_left_out

GOOD = """\
id: weather
family: sequential_reasoning
turns: ["weather in Paris?"]
tools:
  - name: get_weather
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    results:
      - when: {city: Paris}
        returns: {sky: clear}
reference:
  calls: [{name: get_weather, arguments: {city: Paris}}]
  reply: It is clear in Paris.
check:
  calls:
    required: [{name: get_weather, arguments: {city: paris}}]
  reply: {contains: [clear]}
"""


def test_every_shipped_scenario_passes_its_own_check() -> None:
    scenarios, left_out = shipped_scenarios()
    for scenario in scenarios:
        assert reference_problems(scenario) == []
    skip_left_out(left_out)


def test_a_misspelled_reference_value_fails_validate(write, capsys) -> None:  # type: ignore[no-untyped-def]
    path = write("s.yaml", GOOD.replace("arguments: {city: Paris}}]", "arguments: {city: Pariss}}]"))
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "scenario weather: reference.calls.0 (get_weather): matches no `results` rule" in err
    assert "reference: its own check fails it: arguments of get_weather" in err


def test_a_reference_reply_its_check_refuses_is_named(write) -> None:  # type: ignore[no-untyped-def]
    scenario = load_scenario(write("s.yaml", GOOD.replace("reply: It is clear in Paris.", "reply: Sunny.")))
    assert reference_problems(scenario) == [
        "scenario weather: reference: its own check fails it: reply mentions 'clear'"
    ]


def test_a_good_scenario_validates(write, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["validate", str(write("s.yaml", GOOD))]) == 0
    assert "1 of 1 files valid" in capsys.readouterr().out
