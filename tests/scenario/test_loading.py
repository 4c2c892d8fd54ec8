"""Loading scenarios: every bad file gets one line naming the file, the field and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ScenarioError
from evalkit.scenario.model import load_scenario, load_scenarios

GOOD = """\
id: greet
family: casual_greeting
turns: ["hi"]
tools:
  - name: read_file
    parameters: {type: object, properties: {path: {type: string}}}
reference: {reply: "Hello!"}
check: {no_tool_calls: true}
"""


def error_of(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value


def test_good_file_loads(write):
    scenario = load_scenario(write("s.yaml", GOOD))
    assert scenario.id == "greet" and scenario.ideal_iterations == 1


def test_shipped_scenarios_all_load(repo_root):
    scenarios = load_scenarios(sorted((repo_root / "scenarios").rglob("*.yaml")))
    families = [s.family for s in scenarios]
    for family in ("sequential_reasoning", "relevance_detection", "data_gap_recovery", "casual_greeting"):
        assert families.count(family) >= 4


def test_unknown_field_names_field_and_line(write):
    err = error_of(write("s.yaml", GOOD.replace("turns:", "colour: red\nturns:")))
    assert str(err).startswith(str(Path(err.path))) and err.field == "colour" and err.line == 3
    assert "Extra inputs" in str(err)


def test_wrong_type_names_nested_field(write):
    err = error_of(write("s.yaml", GOOD.replace('turns: ["hi"]', "turns: [[1, 2]]")))
    assert err.field == "turns.0" and err.line == 3


def test_unknown_tool_in_check(write):
    bad = GOOD.replace("check: {no_tool_calls: true}", "check: {calls: {required: [{name: rm_rf}]}}")
    err = error_of(write("s.yaml", bad))
    assert "unknown tool 'rm_rf'" in str(err) and err.field == "check.calls.required.0.name" and err.line == 8


def test_duplicate_ids_across_files(write):
    a, b = write("a.yaml", GOOD), write("b.yaml", GOOD)
    with pytest.raises(ScenarioError, match="duplicate scenario id 'greet'"):
        load_scenarios([a, b])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "file is empty"),
        ("- just\n- a list\n", "must be a mapping"),
        (b"id: caf\xe9\n", "not UTF-8"),
        ("id: [unclosed\n", "invalid YAML"),
        ("id: !!python/object/apply:os.system ['echo hi']\n", "is not allowed"),
        ("a: 1\n---\nb: 2\n", "expected one YAML document"),
        ("a: 1\na: 2\n", "duplicate key"),
        ("x: " + "[" * 60 + "]" * 60 + "\n", "nested deeper"),
    ],
)
def test_bad_files_get_one_clear_error(write, content, message):
    err = error_of(write("bad.yaml", content))
    assert message in str(err) and str(err).count("\n") == 0


def test_alias_bomb_is_stopped(write):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefg", "bcdefgh", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    err = error_of(write("bomb.yaml", "\n".join(lines) + "\n"))
    assert "alias bomb" in str(err)


def test_huge_file_is_refused(write):
    err = error_of(write("huge.yaml", "a: '" + "x" * 1_100_000 + "'\n"))
    assert "limit" in str(err)


def test_yaml_boolean_lookalike_keys_stay_strings(write):
    scenario = load_scenario(write("s.yaml", GOOD.replace("path: {type: string}", "on: {type: boolean}")))
    assert "on" in scenario.tools[0].parameters["properties"]


def test_validate_command_reports_each_bad_file(write, capsys):
    good, bad = write("ok.yaml", GOOD.replace("id: greet", "id: greet-2")), write("bad.yaml", "id: [\n")
    assert main(["validate", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(str(bad)) and "Traceback" not in captured.err
    assert "1 of 2 files valid" in captured.out
