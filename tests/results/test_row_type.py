"""The run-table row type (`evalkit.results.runs.RunRow`): whole records and the run table's rows
both have every field of it, with the same values; a row has no transcript fields at all, so code
that reads a transcript from the light table fails loudly instead of seeing an empty one."""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import RunRow
from evalkit.results.scan import scan_results
from evalkit.results.table import RunTable
from evalkit.run.runner import run_config
from tests.run.test_runner import config

ROOT = Path(__file__).resolve().parent.parent.parent
_TRANSCRIPT = ("calls", "messages", "check", "interventions")


@pytest.fixture(scope="module")
def sim_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_config(config(runs=3), tmp_path_factory.mktemp("rows") / "r.jsonl")


def _members() -> list[str]:
    return [name for name, value in inspect.getmembers(RunRow) if isinstance(value, property)]


def test_the_row_type_names_the_fields_the_statistics_read() -> None:
    members = set(_members())
    assert {"run_id", "cell", "outcome", "counted", "correct", "usage", "sampling", "prepared"} <= members
    assert not members & set(_TRANSCRIPT)


def test_a_table_row_has_every_field_of_the_row_type_with_the_records_values(sim_file: Path) -> None:
    rows, whole = scan_results([sim_file]).runs, load_results([sim_file]).runs
    assert isinstance(rows, RunTable) and len(rows) == len(whole) > 0
    for row, record in zip(rows, whole, strict=True):
        assert {m: getattr(row, m) for m in _members()} == {m: getattr(record, m) for m in _members()}


def test_a_table_row_has_no_transcript_rather_than_an_empty_one(sim_file: Path) -> None:
    row = scan_results([sim_file]).runs[0]
    for name in _TRANSCRIPT:
        assert not hasattr(row, name), name
        with pytest.raises(AttributeError):
            getattr(row, name)


def test_whole_records_are_typed_whole(sim_file: Path) -> None:
    runs = load_results([sim_file]).runs
    assert runs and all(type(r) is RunRecord for r in runs)
    assert any(r.messages for r in runs)


_SNIPPET = """
from evalkit.results.reader import load_results
from evalkit.results.scan import scan_results

rows = scan_results(["r.jsonl"]).runs
whole = load_results(["r.jsonl"]).runs
print(whole[0].messages, rows[0].cell, rows[0].prepared)
print(rows[0].messages)
"""


def test_reading_a_transcript_from_the_light_table_is_a_type_error(tmp_path: Path) -> None:
    """mypy (the project's settings) holds what the runtime tests hold: a row's transcript is an
    error where it is read, a whole record's is not."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed in this Python: pip install -e '.[dev]'")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(_SNIPPET)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), str(snippet)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "snippet.py:8:" in errors[0], done.stdout + done.stderr
    assert '"RunRow" has no attribute "messages"' in errors[0]
