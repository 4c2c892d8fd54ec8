"""SIGKILL at random points, then `--resume`: the file ends with exactly the plan's runs, each once,
on the simulated backend and over HTTP (kills must never lose or duplicate a result).

The run is a child process (`python -m evalkit run`), killed once some records are on disk; the
points are drawn from a seeded RNG so a failure reproduces.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.results.integrity import check_integrity
from evalkit.results.reader import load_results
from tests.run.test_runner import SCENARIOS
from tests.stub_server import chat_stubs

ROOT = Path(__file__).resolve().parents[2]
KILLS = 3


def _config(tmp_path: Path, backend: dict[str, Any], runs: int) -> Path:
    path = tmp_path / "kill.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "kill",
                "seed": 11,
                "runs": runs,
                "scenarios": [SCENARIOS],
                "families": ["casual_greeting", "sequential_reasoning"],
                "backends": [backend],
                "strategies": {"trust_text": ["trust_text"], "nudge": ["retry_nudge"]},
            }
        )
    )
    return path


def _runs_on_disk(out: Path) -> int:
    if not out.exists():
        return 0
    return out.read_bytes().count(b'"type":"run"')


def _start(config: Path, out: Path, *extra: str, errors: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(out), "--no-progress", *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=errors,
    )


def _kill_after(proc: subprocess.Popen[bytes], out: Path, records: int) -> None:
    """SIGKILL once `records` run records are on disk (or the run ended on its own)."""
    deadline = time.monotonic() + 300  # a guard against a hung child, not a measurement
    while proc.poll() is None and _runs_on_disk(out) < records and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _kill_and_resume(tmp_path: Path, backend: dict[str, Any], runs: int, seed: str) -> None:
    config, out = _config(tmp_path, backend, runs), tmp_path / "r.jsonl"
    planned = 8 * 2 * runs  # 8 scenarios of the two families × 2 strategies × runs
    rng = random.Random(seed)
    for kill in range(KILLS):
        proc = _start(config, out, *(["--resume"] if kill else []))
        _kill_after(proc, out, _runs_on_disk(out) + rng.randint(1, planned // (KILLS + 1)))
    assert _runs_on_disk(out) < planned, "the kills came too late to cut the run"
    final = _start(config, out, "--resume", errors=subprocess.PIPE)
    _, err = final.communicate(timeout=600)
    assert final.returncode == 0, err.decode()
    results = load_results([out])
    ids = [json.loads(line)["run_id"] for line in out.read_text().splitlines() if '"type":"run"' in line]
    assert len(set(ids)) == planned and len(results.runs) == planned
    assert [p for p in check_integrity(results) if p.severity == "error"] == []
    assert len(ids) == len(set(ids)), "a run was written twice"
    assert results.footers[-1].status == "complete"


def test_sigkill_at_random_points_on_the_simulated_backend_then_resume(tmp_path: Path) -> None:
    _kill_and_resume(
        tmp_path, {"label": "sim", "kind": "sim", "model": "small-local", "concurrency": 4}, runs=40, seed="sim"
    )


@pytest.mark.parametrize("seed", ["http-1", "http-2"])
def test_sigkill_at_random_points_over_http_then_resume(tmp_path: Path, seed: str) -> None:
    with chat_stubs(1, delay_s=0.01) as (server,):
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        _kill_and_resume(
            tmp_path, {"label": "stub", "kind": "openai", "model": "m", "url": url, "concurrency": 4}, runs=6, seed=seed
        )
