"""The supervisor of one server phase: the process evalkit starts, which starts the phase's command.

    python -m evalkit.backends.phase_supervisor --parent PID --log FILE [--secret NAME]... [--grace S] -- ARGV...

A phase is rarely one process: a wrapper script (`uv run`, `npx`, a start script) starts the server
as its child, and a server may start helpers in a session of their own (`setsid`), out of reach of
its process group. Signalling a process group misses those, and nothing at all runs when evalkit is
killed outright. So every phase runs under this small supervisor, which:

- is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant whose parent exits is re-parented to
  it, not to init, so the whole tree stays its descendants whatever they do with sessions;
- gets SIGTERM when evalkit dies (`PR_SET_PDEATHSIG`), even by SIGKILL, and exits at once if evalkit
  was already gone when it started;
- on SIGTERM, SIGINT or SIGHUP sends SIGTERM to every descendant, then SIGKILL after `--grace`
  seconds to every one still there (again and again, so one forking meanwhile is caught too);
- when the command exits on its own, kills what it left behind and exits with the command's code
  (128 + N for a command killed by signal N);
- writes the command's output to `--log`, with the value of every environment variable named by
  `--secret` blanked (`evalkit.results.secrets.redact`) before it reaches the file: a phase's `env:`
  may hold a key, and its log's last line goes into error texts and run records.

The tree is read from /proc, so this is Linux's; elsewhere the process group is all there is.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, TextIO

from evalkit.results.secrets import MIN_SECRET_CHARS, encodings, redact

__all__ = ["descendants", "main"]

_PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>
_PR_SET_CHILD_SUBREAPER = 36
_STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_TICK_S = 0.02


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the process group still holds
        ctypes.CDLL(None, use_errno=True).prctl(option, value)


def _die_with_supervisor() -> None:
    """In the command's process before exec: SIGKILL if the supervisor itself is killed outright."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _parents() -> dict[int, int]:
    """Every live (not zombie) process's parent, read from /proc."""
    found: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:  # it exited while we looked
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()  # after the command name, which may hold spaces
            # a zombie has exited already: signalling it does nothing, and waiting for it would spin
            if fields[0] != b"Z":
                found[int(entry.name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """The live processes under `root` (children, their children, …), as /proc shows them now."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _signal_all(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _reap(command: subprocess.Popen[bytes]) -> None:
    """Collect exited children: the command (through Popen, which keeps its code) and orphans re-parented here."""
    command.poll()
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == command.pid:  # exited between Popen's look and ours: keep its code for Popen
            command.returncode = os.waitstatus_to_exitcode(status)


def end_tree(command: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to every descendant, SIGKILL after `grace_s` to every one left, until none is."""
    deadline = time.monotonic() + grace_s
    _signal_all(_tree(command), signal.SIGTERM)
    # reaping while waiting: an exited child stays in /proc as a zombie until this process collects it
    while (left := _tree(command)) and time.monotonic() < deadline:
        _reap(command)
        time.sleep(_TICK_S)
    # again and again: a process that forked during the grace leaves a child the first round missed
    while left:
        _signal_all(left, signal.SIGKILL)
        time.sleep(_TICK_S)
        _reap(command)
        left = _tree(command)
    _reap(command)


def _tree(command: subprocess.Popen[bytes]) -> set[int]:
    """What is left to end: every descendant, and the command itself (where no /proc shows them)."""
    return set(descendants(os.getpid())) | ({command.pid} if command.poll() is None else set())


class _Redactor:
    """The command's output to the log, secrets blanked. A read may end inside a secret (or inside one
    of its encodings), so the text that could still be the start of one waits for the next read; what
    is written never ends inside an occurrence, so each is blanked whole, the longest first."""

    def __init__(self, log: TextIO, secrets: list[str]):
        self.log = log
        self.secrets = secrets
        self.variants = sorted({v for s in secrets if len(s) >= MIN_SECRET_CHARS for v in encodings(s)}, key=len)
        # one character less than the longest secret form: the most a read can end inside one
        self.keep = max((len(v) for v in self.variants), default=1) - 1
        self.pending = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def write(self, data: bytes, *, final: bool = False) -> None:
        # incremental: a read may end inside a multi-byte character, which the next read completes
        raw = self.pending + self.decoder.decode(data, final=final)
        cut = len(raw) if final else self._safe_cut(raw)
        self.log.write(redact(raw[:cut], self.secrets))
        self.log.flush()
        self.pending = raw[cut:]

    def _safe_cut(self, raw: str) -> int:
        """Where the text may be cut: a whole line written at once (no secret spans a line break),
        else all but the last characters, never inside an occurrence of a secret."""
        cut = max(len(raw) - self.keep, raw.rfind("\n") + 1, 0)
        moved = True
        # moving the cut back before one occurrence may put it inside another: repeat until none spans it
        while moved:
            moved = False
            for variant in self.variants:
                found = raw.find(variant, max(0, cut - len(variant) + 1), cut + len(variant) - 1)
                if 0 <= found < cut:
                    cut, moved = found, True
        return cut


def _pump(source: BinaryIO, redactor: _Redactor) -> None:
    """Until every writer is gone. A log that cannot be written (a full disk) is given up, but the
    output is still read: a command whose pipe fills up would block, and its server with it."""
    writing = True
    with contextlib.suppress(OSError, ValueError):
        while chunk := os.read(source.fileno(), 65536):
            if writing:
                try:
                    redactor.write(chunk)
                except (OSError, ValueError):
                    writing = False
    if writing:
        with contextlib.suppress(OSError, ValueError):
            redactor.write(b"", final=True)


def _exit_code(code: int | None) -> int:
    if code is None:
        return 1
    # Popen gives −N for a death by signal N; a shell says 128 + N, as this process's parent expects
    return 128 - code if code < 0 else code


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="phase_supervisor")
    p.add_argument("--parent", type=int, required=True, help="evalkit's pid: gone already, start nothing")
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--secret", action="append", default=[], metavar="NAME")
    p.add_argument("--grace", type=float, default=10.0)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    if not args.command:
        p.error("no command")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    stopped: list[int] = []  # a flag a signal handler may set at any point (no lock)
    for sig in _STOPS:
        signal.signal(sig, lambda signum, _: stopped.append(signum))
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != args.parent:  # evalkit died before the death signal was armed
        return 1
    secrets = [os.environ[name] for name in args.secret if os.environ.get(name)]
    with args.log.open("a", encoding="utf-8") as log:
        redactor = _Redactor(log, secrets)
        redactor.write(f"$ {' '.join(args.command)}\n".encode())
        try:
            command = subprocess.Popen(
                args.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_supervisor,
            )
        except OSError as exc:
            redactor.write(f"cannot start {args.command[0]}: {exc.strerror}\n".encode(), final=True)
            return 127
        assert command.stdout is not None
        pump = threading.Thread(target=_pump, args=(command.stdout, redactor), daemon=True)
        pump.start()
        while not stopped and command.poll() is None:
            _reap(command)
            time.sleep(_TICK_S * 5)
        end_tree(command, args.grace if stopped else 0.0)  # on its own: what it left has no use
        pump.join(timeout=2.0)  # every writer of its output is gone: the rest is in the pipe
    return _exit_code(command.returncode)


if __name__ == "__main__":
    sys.exit(main())
