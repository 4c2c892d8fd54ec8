"""One command phase of a `serve:` chain as a running program (settings: evalkit/backends/phase_config.py).

The command runs under a supervisor (evalkit/backends/phase_supervisor.py) in a session of its own, so
a Ctrl-C in the terminal reaches evalkit alone and evalkit stops the phase in order: SIGTERM to the
supervisor, which ends the command's whole process tree (wrapper scripts, `setsid` descendants), with
SIGKILL after a grace period. The supervisor also ends the tree when evalkit dies, SIGKILL included.
The output goes to a log file in the chain's log folder, with the phase's `env:` values blanked, and
every error about it is one line: the phase, what happened, the log, its last line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from evalkit.backends.phase_config import PhaseSettings, expand_env
from evalkit.backends.serve import log_tail, pick_free_port
from evalkit.errors import ConfigError, NotInstalled, ServerUnavailable
from evalkit.results.portable import portable_args, portable_path

__all__ = ["HOST", "STOP_GRACE_S", "PhaseProcess", "check_phase", "phase_argv", "venv_bin"]

HOST = "127.0.0.1"
STOP_GRACE_S = 10.0  # from SIGTERM to SIGKILL, for every process of a phase
_SUPERVISOR = Path(__file__).with_name("phase_supervisor.py")
_SUPERVISOR_MARGIN_S = 5.0  # a supervisor still there this long after its grace is wedged: SIGKILL its group
_ABSOLUTE = re.compile(r"(?<![\w.:/])/[^\s'\"():,;]+")  # a path in a log line (not a URL's path)
_PER_START = ("port", "url", "upstream")
_SAMPLE = {
    "port": "1",
    "host": HOST,
    "url": "http://127.0.0.1:1",
    "upstream": "http://127.0.0.1:2",
    "python": sys.executable,
    "config": "c.yaml",
}
_BIND_WORDS = ("address already in use", "errno 98", "bind")
_SIMULATED_HEADER = "x-evalkit-simulated"  # evalkit.backends.sim_server.SIMULATED_HEADER (no aiohttp here)


def venv_bin(settings: PhaseSettings, base_dir: Path) -> Path | None:
    """The `bin` folder of the phase's venv (relative to the config's folder), or None."""
    if settings.venv is None:
        return None
    found = (base_dir / _expanded(settings.venv, "venv") / "bin").absolute()
    if not found.parent.exists():  # a venv the config expects to be made here (scripts/install-forge.sh)
        raise NotInstalled(f"venv: {found.parent} is not there (the phase needs it installed)")
    if not found.is_dir():
        raise ConfigError(f"venv: {found.parent} is not a virtual environment (no bin/ folder)")
    return found


def phase_argv(settings: PhaseSettings, base_dir: Path, words: list[str]) -> list[str]:
    """The command line that runs `words` (the command, placeholders filled in).

    `python`: [python, *words]. A command that starts with an option (`-m`) runs under the venv's
    `bin/python`, else under evalkit's own Python. Otherwise its first word is a program, looked up in
    the venv's `bin` first, then on PATH. Relative paths are relative to the config's folder.
    """
    bin_dir = venv_bin(settings, base_dir)
    if settings.python is not None:
        return [str(_existing(base_dir, _expanded(settings.python, "python"), "python")), *words]
    first = words[0]
    if first.startswith("-"):
        python = bin_dir / "python" if bin_dir is not None else Path(sys.executable)
        if not python.exists():
            raise ConfigError(f"venv: {python} does not exist")
        return [str(python), *words]
    if "/" in first:
        return [str(_existing(base_dir, first, "command")), *words[1:]]
    search = os.pathsep.join([str(bin_dir)] * (bin_dir is not None) + [os.environ.get("PATH", "")])
    found = shutil.which(first, path=search)
    if found is None:
        raise ConfigError(f"command: program {first!r} not found {'in the venv or ' if bin_dir else ''}on PATH")
    return [found, *words[1:]]


def check_phase(settings: PhaseSettings, base_dir: Path, config_file: str) -> None:
    """What a run's checks before it starts can tell without starting it: the venv and the program
    exist, and `{config}` has a file to name. Raises ConfigError starting with the field."""
    assert settings.command is not None
    if not config_file and settings.uses("config"):
        raise ConfigError("command: {config} names the run config file, and this config was not read from one")
    phase_argv(settings, base_dir, [w.format_map(_SAMPLE | {"config_dir": str(base_dir)}) for w in settings.command])


def _expanded(text: str, field: str) -> str:
    try:
        return expand_env(text, field)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _existing(base_dir: Path, path: str, field: str) -> Path:
    full = base_dir / path  # an absolute `path` stays itself
    if not full.exists():
        raise ConfigError(f"{field}: {full} does not exist")
    return full.absolute()  # not resolve(): a venv's bin/python is a symlink that must stay the venv's


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is no use
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False


class PhaseProcess:
    """A command phase: `start()` launches it and waits for its readiness URL; `stop()` ends it."""

    def __init__(
        self,
        settings: PhaseSettings,
        name: str,
        *,
        base_dir: Path,
        config_file: str,
        upstream: str | None,
        log_dir: Path,
    ):
        assert settings.command is not None
        self.settings = settings
        self.name = name
        self.base_dir = base_dir
        self.config_file = config_file
        self.upstream = upstream
        self.port = 0
        self.log_path = log_dir / f"{name}.log"  # a restart appends to it
        self.simulated: str | None = None  # the label a model server gave itself (`evalkit serve sim`)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def _values(self) -> dict[str, str]:
        return {
            "port": str(self.port),
            "host": HOST,
            "url": self.url,
            "upstream": self.upstream or "",
            "python": sys.executable,
            "config": self.config_file,
            "config_dir": str(self.base_dir),
        }

    def argv(self, values: dict[str, str] | None = None) -> list[str]:
        assert self.settings.command is not None
        filled = values or self._values()
        return phase_argv(self.settings, self.base_dir, [word.format_map(filled) for word in self.settings.command])

    def environment(self) -> dict[str, str]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        bin_dir = venv_bin(self.settings, self.base_dir)
        if bin_dir is not None:
            env["VIRTUAL_ENV"] = str(bin_dir.parent)
            env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
        env.update(self._filled_env())
        return env

    def _filled_env(self) -> dict[str, str]:
        values = self._values()
        return {k: v.format_map(values) for k, v in self.settings.env.items()}

    def _secret_env(self) -> dict[str, str]:
        """Its `env:` but the values that are evalkit's own (a port, a URL): any may be a key."""
        public = set(self._values().values())
        return {k: v for k, v in self._filled_env().items() if v not in public}

    def secrets(self) -> list[str]:
        """The values nothing evalkit keeps may hold: not its log, a record, the header or a report."""
        return list(self._secret_env().values())

    def ready_url(self) -> str:
        ready = self.settings.ready.format_map(self._values())
        return ready if ready.startswith(("http://", "https://")) else self.url + ready

    @property
    def exit_code(self) -> int | None:
        """The code it exited with, or None while it runs (or before it started)."""
        return None if self._proc is None else self._proc.poll()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    async def start(self) -> None:
        """Launch and wait until ready; a port lost to a race is picked again. Raises ServerUnavailable."""
        fixed = self.settings.port
        if fixed is not None and _port_in_use(fixed):
            raise ServerUnavailable(f"server phase {self.name!r}: port {fixed} is in use")
        attempts = 1 if fixed is not None else 3
        for attempt in range(attempts):
            self.port = fixed or pick_free_port(HOST)
            try:
                self._launch()
                await self._wait_ready()
                return
            except ServerUnavailable:
                self.stop()
                if attempt + 1 >= attempts or not any(w in log_tail(self.log_path, 20).lower() for w in _BIND_WORDS):
                    raise
            except BaseException:  # Ctrl-C while starting: leave no orphan behind
                self.stop()
                raise

    def _launch(self) -> None:
        hidden = [word for name in self._secret_env() for word in ("--secret", name)]
        supervised = [
            *(sys.executable, "-P", str(_SUPERVISOR)),  # -P: the script's folder (backends/) is no import root
            *("--parent", str(os.getpid()), "--log", str(self.log_path), "--grace", f"{STOP_GRACE_S:g}"),
            *hidden,
            "--",
            *self.argv(),
        ]
        with self.log_path.open("a", encoding="utf-8") as log:  # the supervisor's own complaints, if any
            self._proc = subprocess.Popen(
                supervised,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=self.base_dir,
                start_new_session=True,  # its own process group: a terminal's Ctrl-C reaches evalkit alone
            )

    async def _wait_ready(self) -> None:
        url = self.ready_url()
        deadline = time.monotonic() + self.settings.timeout_s
        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if not self.running:
                    raise ServerUnavailable(self.exited_text("while starting"))
                with contextlib.suppress(httpx.TransportError):
                    answer = await client.get(url)
                    if answer.status_code == 200:
                        self.simulated = _simulated_label(answer)
                        return
                await asyncio.sleep(0.1)
        raise ServerUnavailable(
            f"server phase {self.name!r} was not ready after {self.settings.timeout_s:g} s: GET {url} never "
            f"answered 200 (log {self.log_path}: {self.last_line()})"
        )

    def exited_text(self, when: str, *, recorded: bool = False) -> str:
        """One line. `recorded`: for a run record (a committed artifact), so the log by its folder's
        name (in the temporary folder) and its own."""
        log, last = self.log_path, self.last_line()
        if recorded:
            log, last = Path(log.parent.name, log.name), _ABSOLUTE.sub(lambda m: portable_path(m.group()), last)
        return f"server phase {self.name!r} exited with code {self.exit_code} {when} (log {log}: {last})"

    def terminate(self) -> None:
        """Ask its supervisor to end the phase's process tree (SIGKILL follows after `STOP_GRACE_S`)."""
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(signal.SIGTERM)

    def stop(self, timeout_s: float = STOP_GRACE_S + _SUPERVISOR_MARGIN_S) -> int | None:
        """End it (`terminate`), wait up to `timeout_s` for its supervisor, then SIGKILL its process
        group, whatever is left of it; its exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout_s)
        _signal_group(proc.pid, signal.SIGKILL)  # a supervisor that could not finish: its group at least
        proc.wait()
        return proc.returncode

    def last_line(self) -> str:
        lines = [line.strip() for line in log_tail(self.log_path, 50).splitlines() if line.strip()]
        return lines[-1][:300] if lines else "(empty log)"

    def description(self) -> dict[str, Any]:
        """What the header records: its portable command, readiness path and environment names."""
        return {
            "name": self.name,
            # ports change from run to run: the header keeps their placeholders
            "command": portable_args(self.argv({**self._values(), **{k: f"{{{k}}}" for k in _PER_START}})),
            "cwd": portable_path(self.base_dir),
            "ready": self.settings.ready,
            "env": sorted(self.settings.env),  # names only: a value may be a key
        }


def _simulated_label(answer: httpx.Response) -> str | None:
    label = answer.headers.get(_SIMULATED_HEADER)
    return label if label and label.startswith("SIMULATED") else None


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
