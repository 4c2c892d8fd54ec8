"""`evalkit run` off a terminal: a plain progress line every few seconds (a pipe, a CI log), and on
Ctrl-C a closing line with the runs finished and the exact command that continues the file."""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from evalkit.cli.progress import ProgressBar
from evalkit.results.reader import load_results
from tests.run.test_preflight import write_config

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_off_a_terminal_progress_is_a_plain_line_every_few_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(True, planned=100, stream=stream, clock=clock, interactive=False)
    clock.now = 1.0
    bar(10, 100)
    assert stream.getvalue() == ""  # not yet: a short run prints only its last line
    clock.now = ProgressBar.EVERY_S + 0.5
    bar(40, 100)
    clock.now += 1
    bar(45, 100)
    clock.now += ProgressBar.EVERY_S
    bar(100, 100)
    lines = stream.getvalue().splitlines()
    assert [line.split(" runs")[0] for line in lines] == ["40/100", "100/100"]
    assert "\r" not in stream.getvalue() and "\033" not in stream.getvalue()


def test_the_bar_off_a_terminal_is_enabled_by_default_and_silenced_by_no_progress() -> None:
    assert ProgressBar(True, planned=1, interactive=False).enabled
    quiet = io.StringIO()
    ProgressBar(False, planned=1, stream=quiet, interactive=False)(1, 1)
    assert quiet.getvalue() == ""


def test_ctrl_c_closes_with_the_count_and_the_resume_command(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.yaml", runs=20_000)  # long enough to be stopped midway
    out = tmp_path / "out" / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "evalkit", "run", str(cfg), "-o", str(out), "-n", "20000"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None and not (out.exists() and '"type":"run"' in out.read_text()):
            time.sleep(0.05)  # waiting for the first record; nothing is asserted about time
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    finished = len(load_results([out]).runs)
    assert last.startswith(f"evalkit: interrupted: {finished} of ")
    command = last.split("continue with: ", 1)[1]
    assert shlex.split(command) == ["evalkit", "run", str(cfg), "--resume", "-o", str(out), "-n", "20000"]
