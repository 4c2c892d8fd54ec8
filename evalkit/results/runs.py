"""What a reader hands on: the runs read, as `Results`, and the row type every run in them has.

A run is read in one of two shapes. `load_results` keeps whole `RunRecord`s, transcript included;
`scan_results` keeps a `RunTable` (`evalkit.results.table`) whose rows hold no transcript at all,
and beside it the few whole records a report's drill-down shows. Both shapes have the fields of
`RunRow`, and a statistic, a report's table or the gate reads only those, so it takes either. Code
that reads a transcript asks for whole records, typed as such (`Results[RunRecord]`,
`Results.whole`): a row has no `messages` to read, not an empty list that passes for a run without
any.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from evalkit.chat import Sampling, Usage
from evalkit.errors import MissingExtra
from evalkit.results.records import Cell, Footer, Header, Intervention, PhaseRestart, RunRecord, Served

__all__ = ["Results", "RunRow", "Segment"]


class RunRow(Protocol):
    """A run's fields without its transcript (see the module's docstring), read-only: a `RunRecord`
    has them, and so has a row of a `RunTable`."""

    @property
    def run_id(self) -> str: ...
    @property
    def cell(self) -> Cell: ...
    @property
    def index(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def simulated(self) -> bool: ...
    @property
    def outcome(self) -> str: ...
    @property
    def completed(self) -> bool: ...
    @property
    def correct(self) -> bool: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def first_try(self) -> bool: ...
    @property
    def retries(self) -> int: ...
    @property
    def guard_fires(self) -> int: ...
    @property
    def model_calls(self) -> int: ...
    @property
    def iterations(self) -> int: ...
    @property
    def ideal_iterations(self) -> int: ...
    @property
    def wasted_calls(self) -> int: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def sampling(self) -> Sampling: ...
    @property
    def error(self) -> str | None: ...
    @property
    def scenario_hash(self) -> str | None: ...
    @property
    def served(self) -> Served | None: ...
    @property
    def phase_restarts(self) -> Sequence[PhaseRestart]: ...
    @property
    def counted(self) -> bool: ...
    @property
    def prepared(self) -> Sequence[Intervention]: ...


# the runs' shape: `RunRecord` from `load_results`, any `RunRow` from `scan_results`
R_co = TypeVar("R_co", bound=RunRow, covariant=True)


@dataclass
class Segment:
    """One header..footer stretch of a file: what one invocation of `run` wrote."""

    path: str
    runs_present: int = 0
    footer: Footer | None = None


@dataclass
class Results(Generic[R_co]):
    """Everything read from one or more results files (shards are merged in order).

    `segments`, `duplicates` and `conflicts` are what `check_integrity` needs: how many records
    each invocation left against what its footer counts, and the run ids recorded more than once.
    `transcripts` is None when `runs` are whole records (`load_results`); `evalkit.results.scan` sets it to
    the few whole records it kept per cell key, its `runs` then being rows without transcripts.
    """

    headers: list[Header] = field(default_factory=list)
    runs: Sequence[R_co] = field(default_factory=list)  # a list, or a `RunTable` (scan)
    footers: list[Footer] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[str] = field(default_factory=list)
    transcripts: dict[tuple[str, ...], list[RunRecord]] | None = None
    transcript_limit: int = 0  # with `transcripts`: the most failed runs per cell a drill-down may show

    @property
    def simulated(self) -> bool:
        if any(h.simulated for h in self.headers):
            return True
        table_says = getattr(self.runs, "any_simulated", None)  # a RunTable answers from its columns
        return bool(table_says) if table_says is not None else any(r.simulated for r in self.runs)

    def whole(self, runs: Sequence[RunRow], failed: int) -> Sequence[RunRecord]:
        """The records of one cell's `runs` with their transcripts: all of them, or the sample kept,
        which holds what a drill-down showing up to `failed` failed runs needs."""
        if not runs:
            return []
        if self.transcripts is None:
            whole = [run for run in runs if isinstance(run, RunRecord)]
            # without kept transcripts every run is read whole (`load_results`); a row here is a bug
            if len(whole) < len(runs):
                raise ValueError(f"{runs[0].cell.key()}: rows without transcripts, and no whole records kept")
            return whole
        if failed > self.transcript_limit:
            raise ValueError(f"{failed} failed transcripts per cell asked, {self.transcript_limit} kept")
        return self.transcripts.get(runs[0].cell.key(), [])

    def run_ids(self) -> set[str]:
        return {r.run_id for r in self.runs}

    def to_frame(self) -> Any:
        """A pandas DataFrame with one flat row per run (no transcripts). pandas is the `pandas` extra:
        nothing else in evalkit uses it, so a plain install does without it."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise MissingExtra("Results.to_frame() needs pandas: pip install 'evalkit[pandas]'") from exc

        rows = [_flat_row(r) for r in self.runs]
        return pd.DataFrame(rows)


def _flat_row(run: RunRow) -> dict[str, Any]:
    row: dict[str, Any] = dict(run.cell.model_dump())
    keep = (
        "run_id",
        "index",
        "seed",
        "simulated",
        "outcome",
        "completed",
        "correct",
        "failure",
        "first_try",
        "retries",
        "guard_fires",
        "model_calls",
        "iterations",
        "ideal_iterations",
        "wasted_calls",
        "latency_s",
        "wall_s",
        "error",
    )
    row.update({k: getattr(run, k) for k in keep})
    row["prompt_tokens"] = run.usage.prompt_tokens
    row["completion_tokens"] = run.usage.completion_tokens
    served = run.served  # the model server's own count behind a guard proxy; None elsewhere
    row["served_calls"] = served.calls if served else None
    row["served_tokens"] = served.prompt_tokens + served.completion_tokens if served else None
    row["served_latency_s"] = served.latency_s if served else None
    row["counted"] = run.counted
    return row
