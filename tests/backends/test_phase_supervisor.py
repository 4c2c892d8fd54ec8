"""The phase supervisor: its log redaction, whatever the reads' boundaries; a header's config with
every server phase's `env:` value blanked; and, with real processes, what it does when the command
exits on its own or ignores SIGTERM (evalkit's side: tests/run/test_phase_tree.py)."""

from __future__ import annotations

import base64
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit.backends.phase_supervisor
from evalkit.backends.phase_supervisor import _Redactor
from evalkit.results.secrets import REDACTED, public_config

KEY = "sk-4f9e2d1c0b8a7f6e"
SUPERVISOR = Path(evalkit.backends.phase_supervisor.__file__)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_a_secret_cut_between_reads_is_blanked_whole(size: int) -> None:
    """The output arrives in reads of `size` bytes: no read boundary lets a secret (or its base64,
    or a multi-byte character) through."""
    text = f"héllo {KEY} and {base64.b64encode(KEY.encode()).decode()}\nlast: {KEY}"
    log = io.StringIO()
    redactor = _Redactor(log, [KEY])
    data = text.encode()
    for start in range(0, len(data), size):
        redactor.write(data[start : start + size])
    redactor.write(b"", final=True)
    assert log.getvalue() == f"héllo {REDACTED} and {REDACTED}\nlast: {REDACTED}"


def test_a_whole_line_is_written_at_once() -> None:
    """A finished line reaches the log without waiting for more output (errors quote the last line)."""
    log = io.StringIO()
    _Redactor(log, [KEY]).write(b"ready\n")
    assert log.getvalue() == "ready\n"


def test_a_header_keeps_a_phase_env_names_not_its_values() -> None:
    phases = [{"command": ["a"], "env": {"API_KEY": KEY, "MODE": "strict"}}, {"command": ["b"]}]
    config = {"backends": [{"label": "x", "serve": {"phases": phases}}]}
    (backend,) = public_config(config)["backends"]
    assert backend["serve"]["phases"] == [
        {"command": ["a"], "env": {"API_KEY": REDACTED, "MODE": REDACTED}},
        {"command": ["b"]},
    ]


def _supervise(tmp_path: Path, script: str, *, grace: str = "10") -> subprocess.Popen[bytes]:
    """The supervisor as evalkit starts it (its own session), over a bash `script`."""
    options = ["--parent", str(os.getpid()), "--log", str(tmp_path / "log"), "--grace", grace]
    return subprocess.Popen(
        [sys.executable, "-P", str(SUPERVISOR), *options, "--", "bash", "-c", script], start_new_session=True
    )


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def _pid(path: Path) -> int:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.02)
    return int(path.read_text())


def test_a_command_that_exits_takes_its_setsid_helper_with_it(tmp_path: Path) -> None:
    """The command dies on its own (a crash) and leaves a helper in a session of its own: the
    supervisor ends it and exits with the command's code."""
    helper = tmp_path / "helper.pid"
    code = f'import os, time; open("{helper}", "w").write(str(os.getpid())); time.sleep(600)'
    script = f"setsid {sys.executable} -c '{code}' &"
    script += f" while [ ! -s {helper} ]; do sleep 0.02; done; echo crashing; exit 3"
    supervisor = _supervise(tmp_path, script)
    assert supervisor.wait(timeout=60) == 3
    assert not _alive(_pid(helper))
    assert (tmp_path / "log").read_text().splitlines()[-1] == "crashing"


def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    started = tmp_path / "started"
    script = f"trap '' TERM; echo $$ > {started}; while :; do sleep 0.05; done"
    supervisor = _supervise(tmp_path, script, grace="0.5")
    command = _pid(started)
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(timeout=60) == 128 + signal.SIGKILL
    assert not _alive(command)
