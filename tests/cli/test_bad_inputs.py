"""The project's own bad-input fixtures (tests/data/bad/): `evalkit validate` gives one line per file
naming the file and the field, exit 1, no traceback and no side effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"

# file -> the field (or the limit) its one-line error must name
EXPECTED = {
    "config_families_match_nothing.yaml": "families:",
    "config_key_unset.yaml": "backends.0.api_key_env:",
    "config_plugin_function.yaml": "strategies.evil: plugin 'shutil:rmtree': 'rmtree' is a function",
    "config_plugin_missing.yaml": "strategies.mine: plugin 'no_such_guard_module:Guard': no module",
    "config_plugin_os_system.yaml": "strategies.evil: plugin 'os:system'",
    "config_runs_zero.yaml": "runs:",
    "config_undeclared_family.yaml": "custom_families: ",
    "config_unknown_kind.yaml": "backends.0.kind:",
    "config_url_empty.yaml": "backends.0.url:",
    "config_url_ftp.yaml": "backends.0.url:",
    "config_url_no_scheme.yaml": "backends.0.url:",
    "config_url_port_out_of_range.yaml": "backends.0.url: url 'http://127.0.0.1:99999/v1' is not a URL",
    "config_url_unparseable.yaml": "backends.0.url: url 'http://[::1' is not a URL",
    "scenario_alias_bomb.yaml": "an alias bomb",
    "scenario_deep_nesting.yaml": "nested deeper than",
    "scenario_invalid_yaml.yaml": "invalid YAML",
    "scenario_mock_never_matches.yaml": "tools.0.results.0.when.day:",
    "scenario_mock_unknown_operator.yaml": "unknown matcher operator '$startswith'",
    "scenario_reference_misspelled.yaml": "reference.calls.0.arguments.dya:",
    "scenario_schema_required_missing.yaml": "tools.0.parameters.required.0:",
    "scenario_schema_type_str.yaml": "tools.0.parameters.properties.path.type:",
    "scenario_turns_not_a_list.yaml": "turns:",
    "scenario_unknown_check_field.yaml": "check.reply.startswith:",
}


def test_every_fixture_is_listed() -> None:
    assert sorted(p.name for p in BAD.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate_names_the_file_and_the_field_in_one_line(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = BAD / name
    assert main(["validate", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    problems = [line for line in (out + err).splitlines() if line.startswith(str(path))]
    assert len(problems) == 1, out + err
    assert EXPECTED[name] in problems[0]


def test_validating_the_folder_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the os:system plugin's `touch` would land
    assert main(["validate", str(BAD)]) == 1
    assert f"0 of {len(EXPECTED)} files valid" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_a_report_suffix_no_format_writes_is_refused_before_the_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --report r.pdf` used to run the whole matrix, then stop at the suffix."""
    out = tmp_path / "r.jsonl"
    code = main(["run", "configs/default.yaml", "-n", "1", "-o", str(out), "--report", str(tmp_path / "r.pdf")])
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err.splitlines()[-1].endswith("r.pdf: unknown suffix (use one of .html, .json, .md)")
