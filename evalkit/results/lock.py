"""One writer per results file: an exclusive `flock` held for the life of a run.

Two `run --resume` on one file would both see the same runs pending and write them twice. The lock
is a sidecar `<path>.lock` (the results file itself may not exist yet, and a failed start must not
leave it behind) holding the PID of its owner, so a second writer is told who holds it. The sidecar
sits next to the target's resolved path: a symlink, or a folder reached through one, names the same
file, so every writer of `run`, `rescore` and `merge` meets the same lock. The kernel
drops a `flock` when its process dies, so a killed run never leaves a stale lock, only a stale file
that the next run takes over.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from evalkit.errors import ResultsError
from evalkit.results.writer import output_error

__all__ = ["OutputLock", "hold_outputs"]


class OutputLock:
    """An exclusive lock on `target` (a file or directory), taken with `acquire`, given back by `release`."""

    def __init__(self, target: Path):
        self.target = Path(target)
        real = self.target.resolve()  # not the name: two names of one file must share its lock
        self.path = real.with_name(real.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while self._fd is None:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                    os.close(fd)
                    raise ResultsError(
                        f"{self.target} is in use by another evalkit run (PID {holder}): "
                        "wait for it to finish, or write elsewhere"
                    ) from None
                if self._same_file(fd):
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                    self._fd = fd
                else:  # the previous holder removed the file between our open and our lock: retry
                    os.close(fd)
        except OSError as exc:
            raise output_error(self.path, exc) from exc

    def _same_file(self, fd: int) -> bool:
        try:
            return os.fstat(fd).st_ino == os.stat(self.path).st_ino
        except FileNotFoundError:
            return False

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):  # removed while locked, so no one can lock a dead file
            self.path.unlink()
        os.close(self._fd)
        self._fd = None


@contextlib.contextmanager
def hold_outputs(*targets: Path | None) -> Iterator[None]:
    """Lock every given target (results file, recordings directory) for the duration of the block."""
    locks = [OutputLock(t) for t in targets if t is not None]
    try:
        for lock in locks:
            lock.acquire()
        yield
    finally:
        for lock in reversed(locks):
            lock.release()
