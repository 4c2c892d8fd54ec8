"""Running one agent process: its own session, a fresh HOME and folder, a time limit, a stop on demand.

The agent runs in a new session (its own process group), so a Ctrl-C in the terminal reaches
evalkit alone. It stops in one of four ways: it exits; the time limit passes; the runner asks
(`stop`: the run went past its served-call budget); or evalkit itself is stopped (the run task is
cancelled). In every case but the first it gets SIGINT (Cline stops on SIGINT, not on SIGTERM: docs/
agents.md), `grace_s` to finish, and then its whole process tree gets SIGKILL: the group, and every
descendant found under /proc, which catches a child that started a session of its own. A program
that cannot start is said in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["AgentProcess", "ProcessResult", "descendants", "kill_tree"]

_KEEP = 4 * 1024 * 1024  # the last 4 MiB of stdout: the final reply is at its end
_STDERR_KEEP = 64 * 1024
Stopped = Literal["exited", "time_limit", "stopped", "start_failed"]


@dataclass(frozen=True)
class ProcessResult:
    stopped: Stopped
    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    error: str | None = None  # why it could not start

    def last_stderr_line(self) -> str:
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return lines[-1][:300] if lines else "(nothing on stderr)"


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, from /proc (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # the command name may hold spaces and parentheses: the fields start after its last ')'
            fields = entry.read_text().rpartition(")")[2].split()
            children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int, tree: list[int]) -> None:
    """SIGKILL the group led by `pid` and every process of `tree` (gathered before the leader died)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for member in [*tree, *descendants(pid)]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, signal.SIGKILL)


async def _drain(stream: asyncio.StreamReader | None, keep: int, into: bytearray) -> None:
    if stream is None:
        return
    # read to the end, or a chatty agent would block on a full pipe; only the tail is kept, trimmed
    # in batches so the copy happens once per `keep` bytes, not once per chunk
    while chunk := await stream.read(65536):
        into += chunk
        if len(into) > 2 * keep:
            del into[: len(into) - keep]


class AgentProcess:
    """One run's agent program, from start to a stop that leaves nothing behind."""

    def __init__(self, argv: list[str], env: Mapping[str, str], workdir: Path, *, grace_s: float):
        self.argv, self.env, self.workdir, self.grace_s = argv, dict(env), workdir, grace_s
        self.pid: int | None = None

    async def run(
        self, time_limit_s: float, stop: asyncio.Event, at_time_limit: Callable[[], None] | None = None
    ) -> ProcessResult:
        """Run it to its end, or stop it: when `stop` is set, or at the time limit (after calling
        `at_time_limit`, while the program is still as the limit found it)."""
        started = time.perf_counter()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                cwd=self.workdir,
                env=self.env,
                # no stdin: an agent that asks a question on the terminal must not wait for an answer
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            why = f"cannot start {self.argv[0]}: {exc.strerror or exc}"
            return ProcessResult("start_failed", None, "", "", time.perf_counter() - started, why)
        self.pid = proc.pid
        out, err = bytearray(), bytearray()
        readers = asyncio.gather(_drain(proc.stdout, _KEEP, out), _drain(proc.stderr, _STDERR_KEEP, err))
        stopped: Stopped = "exited"
        try:
            stopped = await self._wait(proc, time_limit_s, stop)
            if stopped == "time_limit" and at_time_limit is not None:
                at_time_limit()
        finally:
            if proc.returncode is None or stopped != "exited":
                await self._stop(proc)  # also when this task is cancelled: nothing is left running
            else:
                kill_tree(proc.pid, [])  # what it left behind in its group
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(readers, timeout=5)
        text = bytes(out[-_KEEP:]).decode("utf-8", "replace")
        return ProcessResult(
            stopped, proc.returncode, text, bytes(err).decode("utf-8", "replace"), time.perf_counter() - started
        )

    async def _wait(self, proc: asyncio.subprocess.Process, time_limit_s: float, stop: asyncio.Event) -> Stopped:
        exited = asyncio.ensure_future(proc.wait())
        asked = asyncio.ensure_future(stop.wait())
        try:
            done, _ = await asyncio.wait({exited, asked}, timeout=time_limit_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            asked.cancel()
        if exited in done:
            return "exited"
        exited.cancel()
        return "stopped" if asked in done else "time_limit"

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """SIGINT to the group, `grace_s` to end, then SIGKILL to the whole tree."""
        # the tree before the signal: a child that outlives the leader is re-parented and lost to /proc's view
        tree = descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGINT)
        # shielded: a cancelled run still gives the agent its grace and then kills the tree
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.shield(asyncio.wait_for(proc.wait(), timeout=self.grace_s))
        kill_tree(proc.pid, tree)
        await proc.wait()
