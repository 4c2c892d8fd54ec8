"""`evalkit rescore` as a writer: one writer per output file, whatever name reaches it, and a clean
error for an input that is not a results file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.lock import OutputLock
from evalkit.results.reader import load_results
from evalkit.run.rescore import rescore_results
from evalkit.run.runner import run_config
from evalkit.scenario.model import load_scenarios
from tests.run.test_runner import SCENARIOS, config


@pytest.fixture
def scenarios():  # type: ignore[no-untyped-def]
    from glob import glob

    return load_scenarios([Path(p) for p in sorted(glob(SCENARIOS))])


def test_rescore_refuses_an_output_another_writer_holds(tmp_path, scenarios):
    # before: rescore IN -o X replaced X while a run appended to it: both exit 0, the run's records lost
    source = run_config(config(), tmp_path / "in.jsonl")
    out = tmp_path / "x.jsonl"
    holder = OutputLock(out)  # what `run -o x.jsonl` holds for its whole life
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match=f"in use by another evalkit run \\(PID {os.getpid()}\\)"):
            rescore_results(source, out, scenarios)
        assert not out.exists()
        assert not Path(f"{out}.rescoring").exists()
    finally:
        holder.release()
    rescore_results(source, out, scenarios)
    assert len(load_results([out]).runs) == 48
    assert not Path(f"{out}.lock").exists()


def test_in_place_rescores_while_another_one_runs_are_clean_errors(tmp_path, capsys):
    # before: four concurrent in-place rescores gave three FileNotFoundError tracebacks
    source = run_config(config(), tmp_path / "in.jsonl")
    before = source.read_bytes()
    holder = OutputLock(source)
    holder.acquire()
    try:
        code = main(["rescore", str(source), "-o", str(source), "--scenarios", str(Path(SCENARIOS).parents[1])])
    finally:
        holder.release()
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit: error: ") and "in use" in err and "Traceback" not in err
    assert source.read_bytes() == before


def test_a_symlink_to_the_output_does_not_bypass_the_lock(tmp_path, scenarios):
    # before: the lock was taken on the name, so a second writer through a symlink got in
    source = run_config(config(), tmp_path / "in.jsonl")
    out = run_config(config(), tmp_path / "x.jsonl")
    (tmp_path / "alias.jsonl").symlink_to(out)
    holder = OutputLock(out)
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match="in use"):
            rescore_results(source, tmp_path / "alias.jsonl", scenarios)
        with pytest.raises(ResultsError, match="in use"):
            run_config(config(), tmp_path / "alias.jsonl", resume=True)
    finally:
        holder.release()


def test_a_symlinked_folder_does_not_bypass_the_lock(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    holder = OutputLock(tmp_path / "real" / "r.jsonl")
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match="in use"):
            run_config(config(), tmp_path / "link" / "r.jsonl")
    finally:
        holder.release()


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_rescore_of_an_empty_file_is_a_clean_error(tmp_path, scenarios, content):
    # before: FileNotFoundError traceback (the empty output was removed, then renamed)
    source = tmp_path / "empty.jsonl"
    source.write_text(content)
    with pytest.raises(ResultsError, match="no header record"):
        rescore_results(source, tmp_path / "out.jsonl", scenarios)
    assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(ResultsError, match="no header record"):
        rescore_results(source, source, scenarios)
    assert source.read_text() == content
