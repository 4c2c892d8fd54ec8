"""Integrity on read: removed records, conflicting duplicates, missing runs per
cell and header-only files are caught by `check_integrity` and stop `report` and `gate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.integrity import check_integrity, load_checked
from evalkit.results.reader import load_results
from evalkit.run.runner import run_config
from tests.run.test_runner import config


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = run_config(config(), tmp_path_factory.mktemp("complete") / "r.jsonl")
    return out.read_text().splitlines(keepends=True)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def _errors(path: Path) -> list[str]:
    return [p.message for p in check_integrity(load_results([path])) if p.severity == "error"]


def _warnings(path: Path) -> list[str]:
    return [p.message for p in check_integrity(load_results([path])) if p.severity == "warning"]


def test_a_complete_file_has_no_problems(tmp_path, complete):
    assert check_integrity(load_results([_write(tmp_path / "r.jsonl", complete)])) == []


def test_records_removed_from_a_file_are_an_error_for_report_and_gate(tmp_path, complete, capsys):
    # the input: 10% of the records deleted; the report exited 0 and the gate passed
    kept = [line for i, line in enumerate(complete) if not ('"type":"run"' in line and i % 10 == 3)]
    path = _write(tmp_path / "cut.jsonl", kept)
    assert any("footer counts 48 runs written but its segment holds 43" in e for e in _errors(path))
    assert main(["report", str(path), "-o", str(tmp_path / "r.md")]) == 2
    assert main(["gate", "--baseline", str(path), "--candidate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "records were removed" in err and "Traceback" not in err
    assert not (tmp_path / "r.md").exists()


def test_a_duplicate_with_another_verdict_is_refused(tmp_path, complete):
    run = json.loads(complete[4])
    run.update(
        correct=not run["correct"], outcome="iteration_limit" if run["outcome"] != "iteration_limit" else "final_answer"
    )
    path = _write(tmp_path / "dup.jsonl", [*complete, json.dumps(run) + "\n"])
    assert any(f"run {run['run_id']} (" in e and "different verdicts" in e for e in _errors(path))
    with pytest.raises(ResultsError, match="different verdicts"):
        load_checked([path])


def test_an_identical_duplicate_is_a_warning(tmp_path, complete):
    # two writers on one file without a lock wrote every run twice
    path = _write(tmp_path / "twice.jsonl", complete + complete)
    assert _errors(path) == []
    assert any("48 runs recorded twice with the same verdict" in w for w in _warnings(path))
    warned: list[str] = []
    assert len(load_checked([path], warn=warned.append).runs) == 48 and warned


def test_an_infra_error_superseded_by_a_later_record_is_allowed(tmp_path, complete):
    first = json.loads(complete[4])
    first.update(outcome="infra_error", failure="infra_error", correct=False, completed=False)
    lines = list(complete)
    lines[4] = json.dumps(first) + "\n"
    retried = [complete[0], complete[4], complete[-1].replace('"runs_written":48', '"runs_written":1')]
    path = _write(tmp_path / "retried.jsonl", lines + retried)
    assert check_integrity(load_results([path])) == []


def test_a_header_only_file_is_an_error_not_a_report_of_zero_runs(tmp_path, complete, capsys):
    path = _write(tmp_path / "empty.jsonl", [complete[0]])
    assert any("no run records" in e for e in _errors(path))
    assert main(["report", str(path), "-o", str(tmp_path / "r.md")]) == 2
    assert "no run records (header only)" in capsys.readouterr().err


def test_an_interrupted_file_says_how_many_runs_each_cell_misses(tmp_path, complete):
    # records arrive in completion order, so drop one run from each of 7 cells (a cell with no
    # record at all is invisible to a reader: the header holds runs per cell, not the plan)
    runs = [line for line in complete if '"type":"run"' in line]
    dropped: dict[str, int] = {}
    for i, line in enumerate(runs):
        key = json.dumps(json.loads(line)["cell"], sort_keys=True)
        if key not in dropped and len(dropped) < 7:
            dropped[key] = i
    cell = json.loads(runs[min(dropped.values())])["cell"]
    name = "/".join(cell[k] for k in ("backend", "model", "mode", "strategy", "scenario"))
    kept = [line for i, line in enumerate(runs) if i not in dropped.values()]
    path = _write(tmp_path / "killed.jsonl", [complete[0], *kept])  # killed: no footer
    assert _errors(path) == []
    warnings = _warnings(path)
    assert any("no footer after the last records" in w for w in warnings)
    missing = next(w for w in warnings if "runs missing" in w)
    assert missing.startswith(f"{path}: 7 runs missing against 3 per cell")
    assert "misses 1" in missing and "and 2 more cells" in missing  # five cells listed, then a count
    assert name.split("/")[0] in missing


def test_a_footer_counting_fewer_records_than_present_means_a_second_writer(tmp_path, complete):
    runs = [line for line in complete if '"type":"run"' in line]
    path = _write(tmp_path / "two.jsonl", [*complete[:-1], runs[0], complete[-1]])
    assert any("another process wrote into the file" in e for e in _errors(path))
