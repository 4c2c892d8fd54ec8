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
    assert main(["validate", "--help"]) == 0
    assert "reference solution" in capsys.readouterr().out
    assert main(["list", "--help"]) == 0
    assert "folder searched for scenarios" in capsys.readouterr().out


def test_every_strategy_says_what_it_does_not_where_it_lives(capsys: pytest.CaptureFixture[str]) -> None:
    from evalkit.strategies import STRATEGIES

    assert main(["list", "strategies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, cls in STRATEGIES.items():
        line = next(line for line in lines if line.split()[:1] == [name])
        assert cls.__name__ not in line and cls.__module__ not in line and len(line.split()) > 2, line


def test_scenario_columns_stay_aligned_with_long_bfcl_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "scenarios", "--scenarios-dir", "scenarios/bfcl"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  bfcl-")]
    families = {line.index(line.split()[1], len(line.split()[0]) + 2) for line in rows}
    assert len(rows) > 10 and len(families) == 1  # the family column starts at one place on every row


def test_a_closed_pipe_is_not_a_traceback() -> None:
    import os
    import subprocess
    import sys

    # `evalkit list | head -1` where the reader has already gone: every write meets a closed pipe
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", "list", "strategies"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0
