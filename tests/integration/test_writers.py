"""Writers as separate processes: concurrent writers of one file, and a run stopped at start-up.

Each writer is a child process (`python -m evalkit ...`), as a user's second terminal would be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalkit.results import load_results
from evalkit.results.integrity import check_integrity
from evalkit.run.runner import run_config
from tests.run.test_runner import SCENARIOS, config

ROOT = Path(__file__).resolve().parents[2]


def _evalkit(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_four_concurrent_in_place_rescores_end_cleanly_with_every_run_once(tmp_path):
    # before: three of four ended with a FileNotFoundError traceback
    out = run_config(config(), tmp_path / "r.jsonl")
    scenarios = str(Path(SCENARIOS).parents[1])
    procs = [_evalkit("rescore", str(out), "-o", str(out), "--scenarios", scenarios) for _ in range(4)]
    ends = [(p.returncode, err.decode()) for p in procs for _, err in [p.communicate(timeout=300)]]
    assert all(code in (0, 2) for code, _ in ends), ends
    assert any(code == 0 for code, _ in ends)
    for code, err in ends:
        assert "Traceback" not in err
        assert code == 0 or ("in use" in err and err.count("\n") == 1)
    results = load_results([out])
    assert len(results.runs) == 48
    assert not [p for p in check_integrity(results) if p.severity == "error"]
