"""Server phases that exited mid-run, per backend and phase: what `run`'s summary and the reports
count from the runs' `phase_restarts` (evalkit/backends/chain.py records them). A guard proxy that
crashes is a finding of an evaluation of guards, not only an operational event."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalkit.results.escaping import plural
from evalkit.results.runs import RunRow

__all__ = ["PhaseExits", "phase_exits", "summary_line"]


@dataclass(frozen=True)
class PhaseExits:
    backend: str
    phase: str  # its name without the chain: `forge`, for forge[0] and forge[1]
    exits: int
    started_again: int
    runs: int  # the runs that held the chain when it exited

    @property
    def counts(self) -> str:
        """`3 times in 2 runs (started again 2 times)`."""
        return (
            f"{plural(self.exits, 'time')} in {plural(self.runs, 'run')} "
            f"(started again {plural(self.started_again, 'time')})"
        )

    @property
    def text(self) -> str:
        return f"server phase {self.phase} exited mid-run {self.counts}"


def phase_exits(runs: Iterable[RunRow]) -> tuple[PhaseExits, ...]:
    """One line per backend and phase that exited mid-run at least once, in backend, phase order."""
    counts: dict[tuple[str, str], list[int]] = {}
    for run in runs:
        # a run counts once per phase, however often that phase exited while it ran
        touched: set[tuple[str, str]] = set()
        for restart in run.phase_restarts:
            # `forge[1]` and `forge[0]` are one phase in two chains: counted together
            key = (run.cell.backend, restart.phase.split("[", 1)[0])
            found = counts.setdefault(key, [0, 0, 0])
            found[0] += 1
            found[1] += restart.started
            if key not in touched:
                found[2] += 1
                touched.add(key)
    return tuple(PhaseExits(b, p, *counts[(b, p)]) for b, p in sorted(counts))


def summary_line(exits: tuple[PhaseExits, ...]) -> str | None:
    """`run`'s summary line, or None when no phase exited."""
    if not exits:
        return None
    total = sum(e.exits for e in exits)
    runs = sum(e.runs for e in exits)
    parts = ", ".join(
        f"{e.backend}: {e.phase} {plural(e.exits, 'time')}, started again {e.started_again}" for e in exits
    )
    return (
        f"server phases that exited mid-run: {plural(total, 'time')} in {plural(runs, 'run')} ({parts}); "
        "see each run's phase_restarts"
    )
