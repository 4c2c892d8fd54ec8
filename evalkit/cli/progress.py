"""The progress of `evalkit run`: a redrawn bar on a terminal, a plain line every few seconds elsewhere.

Hand-written rather than rich's `Progress`, measured (benchmarks/progress.py, 2 shared cores): rich
is no dependency of evalkit, its import costs about 250 ms more than this module's on every `run`,
and the default config's 5,100 updates cost it about 40 ms against about 1 ms here. Nor does rich
give what a CI log needs: off a terminal its live display shows nothing until the end, where this
prints a plain line every few seconds (with the infra errors so far, read from the results file).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line bar on a terminal's stderr: the whole plan (runs finished before a `--resume`
    included), the pace, an ETA and, per backend, the infra errors so far.

    The runner reports (done, total) over the runs still pending; `planned` is the whole plan, so
    the runs finished earlier are `planned - total`. Infra errors are read from the records the
    runner appends to `results` (it flushes each one), so the bar needs nothing else from it.
    """

    WIDTH = 24
    EVERY_S = 5.0  # off a terminal: one plain line this often (and the last one)

    def __init__(
        self,
        enabled: bool,
        planned: int,
        results: Path | None = None,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        interactive: bool | None = None,
    ):
        self.stream = stream or sys.stderr
        # a terminal gets the redrawn bar; a pipe or a CI log a plain line every EVERY_S seconds
        self.interactive = interactive if interactive is not None else (stream is not None or sys.stderr.isatty())
        self.enabled = enabled
        self.planned = planned
        self.clock = clock
        self.started = clock()
        self.last = -1.0
        self.infra: Counter[str] = Counter()
        self._tail = _Tail(results) if self.enabled and results is not None else None

    def line(self, done: int, total: int) -> str:
        before = max(self.planned - total, 0)
        planned = before + total
        elapsed = self.clock() - self.started
        filled = self.WIDTH * (before + done) // max(planned, 1)
        text = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {before + done}/{planned} runs"
        if before:
            text += f" ({before} before resume)"
        if done and elapsed > 0:
            per_run = elapsed / done
            pace = f"{1 / per_run:.1f} runs/s" if per_run < 1 else f"{per_run:.1f} s/run"
            text += f"  {pace}  ETA {_clock_text(per_run * (total - done))}"
        if self.infra:
            text += "  infra errors: " + ", ".join(f"{label} {n}" for label, n in sorted(self.infra.items()))
        return text

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._tail is not None:
            self.infra.update(self._tail.infra_errors())
        now = self.clock()
        if not self.interactive:
            self._plain(now, done, total)
            return
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        self.stream.write(f"\r{self.line(done, total)} \033[K")  # clear what a longer line left behind
        if done >= total:
            self.stream.write("\n")
            self.close()
        self.stream.flush()

    def _plain(self, now: float, done: int, total: int) -> None:
        if done < total and now - max(self.last, self.started) < self.EVERY_S:
            return
        self.last = now
        self.stream.write(self.line(done, total).split("] ", 1)[1] + "\n")
        self.stream.flush()
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()
            self._tail = None


class _Tail:
    """Reads the run records appended to a results file since the tail was made.

    The file is opened at the first read, not created here: the tail is made before the run's
    checks, and a start that fails them must leave no file behind."""

    def __init__(self, path: Path):
        self._path = path
        self._start = path.stat().st_size if path.is_file() else 0
        self._fh: TextIO | None = None
        self._partial = ""

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def _open(self) -> TextIO | None:
        if self._fh is None and self._path.is_file():
            self._fh = self._path.open("r", encoding="utf-8")
            self._fh.seek(min(self._start, self._path.stat().st_size))
        return self._fh

    def infra_errors(self) -> Counter[str]:
        found: Counter[str] = Counter()
        fh = self._open()
        if fh is None:
            return found
        chunk = self._partial + fh.read()
        *lines, self._partial = chunk.split("\n")
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line a resumed run cut off and rewrote
            if isinstance(record, dict) and record.get("outcome") == "infra_error":
                found[str(record.get("cell", {}).get("backend", "?"))] += 1
        return found


def _clock_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
