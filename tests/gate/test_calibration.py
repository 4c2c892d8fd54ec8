"""CI enforces the calibration's assertions: `benchmarks/gate_calibration.py --quick` exits 0 only
when every test the gate can run keeps its size on the quick grid and `evalkit plan`'s runs reach
80% power for the test that will run in every mode (`benchmarks/calibration_checks.py`)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from scipy import special

from evalkit.stats.gate_tests import select
from evalkit.stats.unconditional import Region, ordering_region

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


def _checks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibration_checks", ROOT / "benchmarks" / "calibration_checks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class _ScoreOnly:
    """Farrington–Manning's score test alone, which the gate does not run: its size at N = 25,
    0.95 → 0.90, margin 0.05 is 0.070 at α = 0.05 (tests/stats/test_score.py)."""

    name = "score test alone"

    def region(self, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
        return ordering_region("fm", n_base, n_cand, margin, float(special.ndtri(1 - alpha)))


def test_the_size_check_fails_a_test_above_its_level() -> None:
    """The assertion can fail: the check the calibration runs on every test flags a test whose size
    is above α, and passes the test the gate runs in its place (Chan's exact test)."""
    checks = _checks()
    above = checks._unpaired_size(_ScoreOnly(), 25, 0.05, 0.05, (0.95,))
    assert above.size > 0.069 and not above.holds
    kept = checks._unpaired_size(select(False, 0.05, "boschloo", 25, 25), 25, 0.05, 0.05, (0.95,))
    assert kept.holds
