"""`evalkit list strategies` says what each guard takes: its YAML options with their defaults."""

from __future__ import annotations

import pytest

from evalkit.cli import main


def test_list_strategies_shows_options_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "strategies"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    nudge = lines.index(next(line for line in lines if line.split()[:1] == ["retry_nudge"]))
    assert "max_retries=3" in lines[nudge + 1] and "on_exhausted='accept'" in lines[nudge + 1]
    assert "mode='grammar'" in out and "Constrain every call" in out  # a docstring's first line


def test_validate_and_list_explain_themselves_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    assert "reference solution" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["list", "--help"])
    assert "folder searched for scenarios" in capsys.readouterr().out
