"""The run-table row type (`evalkit.results.runs.RunRow`): whole records and the run table's rows
both have every field of it, with the same values; a row has no transcript fields at all, so code
that reads a transcript from the light table fails loudly instead of seeing an empty one."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import RunRow
from evalkit.results.scan import scan_results
from evalkit.results.table import RunTable
from evalkit.run.runner import run_config
from tests.run.test_runner import config

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
