"""Drawing a report's plots on two cores: a forked child draws every other plot, the parent the rest.

matplotlib draws in Python, holding the GIL, so threads would not help. A child made by `fork()`
inherits the report data without copying or pickling it and sends back only SVG text; on the
default matrix this takes a report's plots from about 0.85 s to 0.5 s.

It is used only where it is safe: POSIX `fork`, a second CPU, and no other thread in the process
(a lock another thread held at the fork would stay held in the child). Otherwise, or when the child
fails for any reason, the parent draws everything itself; the output is the same either way
(tests/report/test_plots_forked.py).
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable

__all__ = ["can_fork", "draw"]

Job = Callable[[], str]


def can_fork() -> bool:
    # the CPUs this process may use (a container's limit), not the machine's, where the OS says so
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return hasattr(os, "fork") and cpus > 1 and threading.active_count() == 1


def draw(jobs: dict[str, Job], *, fork: bool | None = None) -> dict[str, str]:
    """Every job's SVG, in the order of `jobs`. `fork`: None decides by `can_fork()`."""
    # every other job, not the second half: the forest plots come first and cost alike, so both
    # processes get a share of each kind
    theirs = list(jobs)[1::2]
    if len(jobs) < 2 or not (can_fork() if fork is None else fork):
        return {name: job() for name, job in jobs.items()}
    drawn = _split(jobs, theirs)
    return {name: drawn[name] for name in jobs}


def _split(jobs: dict[str, Job], theirs: list[str]) -> dict[str, str]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: draw its share, send it, and leave without the parent's exit handlers
        code = 1
        try:
            os.close(read)
            with os.fdopen(write, "wb") as out:
                out.write(pickle.dumps({name: jobs[name]() for name in theirs}))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    source = os.fdopen(read, "rb")
    try:
        drawn = {name: job() for name, job in jobs.items() if name not in theirs}
        payload = source.read()
    finally:
        source.close()  # before waiting: a child still writing then fails instead of blocking
        _, status = os.waitpid(pid, 0)
    # the child's own pickle, from a pipe only it writes to: nothing untrusted is unpickled
    sent: dict[str, str] = pickle.loads(payload) if status == 0 and payload else {}
    return drawn | (sent or {name: jobs[name]() for name in theirs})
