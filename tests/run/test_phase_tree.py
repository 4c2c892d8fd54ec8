"""Nothing a server phase starts outlives evalkit, whatever the stop: a server behind a wrapper script
(as `uv run`, `npx` or a start script would start it), a helper that left the process group with
`setsid`, evalkit killed with SIGKILL, several chains whose phase ignores SIGTERM. Real processes,
written by each test; every wait is bounded and polls for the state, never for a time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.run.test_server_phases import ROOT, SIM_PHASE, STUB, alive, error_line, write_config

# The model server behind a wrapper: bash starts a `setsid` helper (its own session, out of the phase's
# process group) and `evalkit serve sim` as its child (not exec), writing both pids, and waits.
WRAPPER = """#!/bin/bash
setsid {python} -c 'import os, time; open("{dir}/helper.pid", "w").write(str(os.getpid())); time.sleep(3600)' &
"$@" &
echo $! > "{dir}/server.pid"
wait
"""
# A proxy's wrapper that ignores SIGTERM: it notes each SIGTERM in a file named by its pid and stays.
STUBBORN = """#!/bin/bash
trap 'echo term > "{dir}/term.$$"' TERM
{python} {stub} "$@" &
while :; do sleep 0.1; done
"""


def _script(tmp_path: Path, name: str, template: str) -> Path:
    path = tmp_path / name
    path.write_text(template.format(python=sys.executable, dir=tmp_path, stub=STUB), encoding="utf-8")
    path.chmod(0o755)
    return path


def _wrapped_model(tmp_path: Path) -> str:
    wrapper = _script(tmp_path, "wrapper.sh", WRAPPER)
    return SIM_PHASE.replace('command: ["{python}"', f'command: ["{wrapper}", "{{python}}"')


def _pid(path: Path, deadline: float) -> int:
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path.name} never written"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(pids: list[int], within_s: float = 60.0) -> list[int]:
    """The pids still alive once they are all gone or `within_s` has passed (a bound, not a measure)."""
    deadline = time.monotonic() + within_s
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _start_run(config: Path, output: Path, tmp_path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(output), "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )


def _runs_written(output: Path) -> int:
    return output.read_text().count('"type":"run"') if output.exists() else 0


def test_sigkill_of_evalkit_ends_a_wrapped_server_and_its_setsid_helper(tmp_path: Path) -> None:
    config = write_config(tmp_path, _wrapped_model(tmp_path), runs=200, concurrency=1)
    output = tmp_path / "a.jsonl"
    proc = _start_run(config, output, tmp_path)
    deadline = time.monotonic() + 60
    server, helper = _pid(tmp_path / "server.pid", deadline), _pid(tmp_path / "helper.pid", deadline)
    while _runs_written(output) < 1 and proc.poll() is None:
        assert time.monotonic() < deadline, "no run finished"
        time.sleep(0.05)
    assert alive(server) and alive(helper)
    proc.kill()
    proc.communicate(timeout=60)
    assert _gone([server, helper]) == []


def test_the_end_of_a_run_ends_setsid_helpers_and_removes_the_logs(tmp_path: Path) -> None:
    logs = tmp_path / "tmp"
    logs.mkdir()
    config = write_config(tmp_path, _wrapped_model(tmp_path), runs=1, concurrency=1)
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(tmp_path / "a.jsonl")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(logs)},
    )
    assert done.returncode == 0, done.stderr
    server, helper = int((tmp_path / "server.pid").read_text()), int((tmp_path / "helper.pid").read_text())
    assert _gone([server, helper]) == []
    assert list(logs.iterdir()) == []  # nothing failed: no log left behind


def test_a_failed_start_keeps_the_logs_in_one_folder_named_in_the_error(tmp_path: Path) -> None:
    logs = tmp_path / "tmp"
    logs.mkdir()
    phase = (
        "        - name: stub\n"
        f"          command: [{json.dumps(sys.executable)}, {json.dumps(str(STUB))}, --never-ready,"
        ' --upstream, "{upstream}", --port, "{port}"]\n'
        "          timeout_s: 3\n"
    )
    config = write_config(tmp_path, SIM_PHASE + phase, runs=1, concurrency=2)
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(tmp_path / "a.jsonl")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(logs)},
    )
    assert done.returncode == 3, done.stderr
    (folder,) = logs.iterdir()  # one folder for every phase's log
    line = error_line(done.stderr)
    named = line.split("(log ", 1)[1].split(": ", 1)[0]
    assert Path(named).parent == folder and Path(named).is_file()
    assert sorted(p.name for p in folder.iterdir()) == ["model.log", "stub[0].log", "stub[1].log"]
    assert "stub proxy on 127.0.0.1" in Path(named).read_text()


def test_ctrl_c_stops_every_chain_at_once_when_phases_ignore_sigterm(tmp_path: Path) -> None:
    """Three chains whose proxy ignores SIGTERM: all three are asked to stop before any is killed
    (one after the other, the first would be dead, killed after its grace period, before the
    second was asked); then nothing is left."""
    stubborn = _script(tmp_path, "stubborn.sh", STUBBORN)
    phase = f'        - name: stub\n          command: ["{stubborn}", --upstream, "{{upstream}}", --port, "{{port}}"]\n'
    config = write_config(tmp_path, SIM_PHASE + phase, runs=200, concurrency=3)
    output = tmp_path / "a.jsonl"
    proc = _start_run(config, output, tmp_path)
    deadline = time.monotonic() + 120
    while _runs_written(output) < 3:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    while len(marks := list(tmp_path.glob("term.*"))) < 3:
        assert time.monotonic() < deadline, f"{len(marks)} of 3 proxies asked to stop"
        time.sleep(0.02)
    asked = [int(m.name.split(".")[1]) for m in marks]
    assert [alive(pid) for pid in asked] == [True, True, True]
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert _gone(asked) == []
    results = load_results([output])
    assert results.footers[-1].status == "interrupted"


def test_a_phase_stopped_in_process_leaves_no_setsid_helper(tmp_path: Path) -> None:
    """The Python API: `run_config` returns with the wrapped server and its helper gone."""
    config = load_config(write_config(tmp_path, _wrapped_model(tmp_path), runs=1, concurrency=1))
    run_config(config, tmp_path / "a.jsonl")
    server, helper = int((tmp_path / "server.pid").read_text()), int((tmp_path / "helper.pid").read_text())
    assert _gone([server, helper]) == []
