"""One writer per results file: an exclusive file lock (`filelock`, a `flock` on POSIX) held for the
life of a run.

Two `run --resume` on one file would both see the same runs pending and write them twice. The lock
is a sidecar `<path>.lock` (the results file itself may not exist yet, and a failed start must not
leave it behind) holding the PID of its owner, so a second writer is told who holds it. The sidecar
sits next to the target's resolved path: a symlink, or a folder reached through one, names the same
file, so every writer of `run`, `rescore` and `merge` meets the same lock. The kernel
drops a `flock` when its process dies, so a killed run never leaves a stale lock, only a stale file
that the next run takes over.

filelock does the locking, and the race this once did by hand: the holder removes the sidecar
while it still holds it, and a writer that locked the removed file (opened just before) sees that
it has no name any more and tries again. What is left here: the PID written once the lock is held
(`on_acquired`; filelock never truncates a file it did not lock, so a refused writer can read it),
and the sidecar removed on release (filelock keeps it on POSIX).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from evalkit.errors import ResultsError
from evalkit.results.writer import output_error

__all__ = ["OutputLock", "hold_outputs"]


def _write_pid(fd: int) -> None:
    # cut first: a shorter PID must not leave the tail of an earlier owner's longer one
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


class OutputLock:
    """An exclusive lock on `target` (a file or directory), taken with `acquire`, given back by `release`."""

    def __init__(self, target: Path):
        self.target = Path(target)
        real = self.target.resolve()  # not the name: two names of one file must share its lock
        self.path = real.with_name(real.name + ".lock")
        # timeout 0: a second writer is refused at once; not thread-local: a run may end in another thread
        self._lock = FileLock(self.path, timeout=0, thread_local=False, on_acquired=_write_pid)

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock.acquire()
        except Timeout:  # an OSError too: caught first
            raise ResultsError(
                f"{self.target} is in use by another evalkit run (PID {self._holder()}): "
                "wait for it to finish, or write elsewhere"
            ) from None
        except OSError as exc:
            raise output_error(self.path, exc) from exc

    def _holder(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").strip()[:32] or "unknown"
        except OSError:
            return "unknown"

    def release(self) -> None:
        if not self._lock.is_locked:
            return
        with contextlib.suppress(OSError):  # removed while locked, so no one can lock a dead file
            self.path.unlink()
        self._lock.release()


@contextlib.contextmanager
def hold_outputs(*targets: Path | None) -> Iterator[None]:
    """Lock every given target (results file, recordings directory) for the duration of the block."""
    locks = [OutputLock(t) for t in targets if t is not None]
    try:
        for lock in locks:
            lock.acquire()
        yield
    finally:
        # in reverse: the results file's lock, taken first, is given back last
        for lock in reversed(locks):
            lock.release()
