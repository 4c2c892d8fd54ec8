"""The output lock (evalkit.results.lock) across processes, as two `evalkit run` meet it: the second is
refused with the first's PID, a killed holder leaves no lock, and the sidecar goes with its holder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.errors import ResultsError
from evalkit.results.lock import OutputLock

ROOT = Path(__file__).resolve().parents[2]
_HOLD = (
    "import sys; from pathlib import Path; from evalkit.results.lock import OutputLock\n"
    "lock = OutputLock(Path(sys.argv[1])); lock.acquire(); print('held', flush=True); sys.stdin.read()\n"
    "lock.release()\n"
)


def _holder(target: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(target)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_another_process_holding_the_file_is_named_by_its_pid(tmp_path: Path) -> None:
    target = tmp_path / "r.jsonl"
    child = _holder(target)
    try:
        with pytest.raises(ResultsError, match=rf"in use by another evalkit run \(PID {child.pid}\)"):
            OutputLock(target).acquire()
        assert (tmp_path / "r.jsonl.lock").read_text(encoding="utf-8").strip() == str(child.pid)  # not erased
    finally:
        child.communicate("")
    assert child.returncode == 0
    assert not (tmp_path / "r.jsonl.lock").exists()  # the sidecar goes with its holder
    lock = OutputLock(target)
    lock.acquire()
    lock.release()


def test_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    target = tmp_path / "r.jsonl"
    child = _holder(target)
    child.kill()
    child.communicate()
    lock = OutputLock(target)  # the stale sidecar is taken over
    lock.acquire()
    assert (tmp_path / "r.jsonl.lock").read_text(encoding="utf-8").strip().isdigit()
    lock.release()
    assert not (tmp_path / "r.jsonl.lock").exists()
