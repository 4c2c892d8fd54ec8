"""CI enforces the calibration's assertions: `benchmarks/gate_calibration.py --quick` exits 0 only
when every test the gate can run keeps its size on the quick grid and `evalkit plan`'s runs reach
80% power for the test that will run in every mode (`benchmarks/calibration_checks.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_calibration_assertions_hold() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gate_calibration.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=900,  # a bound for a loaded machine; about a minute on two idle cores
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = done.stdout
    for test in ("Boschloo", "Fisher", "McNemar on pairs", "Chan's exact test", "exact Tango test on pairs"):
        assert f"size, {test}: worst " in out, out
    for mode in ("unpaired", "paired", "unpaired, margin 5", "paired, margin 5", "sequential (baseline of 25)"):
        assert f"plan, {mode}: least power at the planned runs 0.8" in out, out
    assert "all hold" in out
