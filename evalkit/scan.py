"""Reading results files for a report or the gate in memory that does not grow with the transcripts.

`scan_results` reads each file once, line by line, through `load_results` (so integrity sees every
record: segment counts, duplicates, conflicting verdicts, footers), and stores each run as a
`RunSummary`: a `RunRecord` without its transcript (no calls, messages or check items; of the
interventions only the `prepare` choices the report tallies), about 1.5 KB instead of about 35 KB.
Per cell it keeps whole only the records a report's drill-down can show: the first passing run, the
first failing run of each failure category and the first `transcripts` failing runs (by run
index), which are exactly the runs `pick_passing` and `pick_failed` choose from all of them.
"""

from __future__ import annotations

import heapq
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.chat import Sampling, Usage
from evalkit.results import Cell, Intervention, Results, RunRecord, load_results

__all__ = ["RunSummary", "scan_results"]

Key = tuple[str, ...]
# (run index, arrival order): the order `pick_failed` and `pick_passing` rank runs in
Rank = tuple[int, int]


class RunSummary(RunRecord):
    """A run record without its transcript: every field a statistic reads, with `calls`, `messages`
    and `check` empty and `interventions` holding only the `prepare` choices. Read-only: the
    empty lists and the cell, sampling and usage objects are shared between rows."""


_FIELDS_SET = frozenset(RunRecord.model_fields)
_EMPTY: list[Any] = []


class _Rows:
    """Builds `RunSummary` rows sharing what repeats: cells, sampling settings, token counts.

    Attributes are set one by one on a bare instance so that CPython gives every row's `__dict__`
    the class's shared key table (a fifth of a dict of its own)."""

    def __init__(self) -> None:
        self._cells: dict[Key, Cell] = {}
        self._sampling: dict[tuple[float, int | None, int], Sampling] = {}
        self._usage: dict[tuple[int, int], Usage] = {}

    def summary(self, run: RunRecord) -> RunSummary:
        row = RunSummary.__new__(RunSummary)
        put = object.__setattr__
        for name, value in run.__dict__.items():
            put(row, name, value)
        s, u = run.sampling, run.usage
        put(row, "cell", self._cells.setdefault(run.cell.key(), run.cell))
        put(row, "sampling", self._sampling.setdefault((s.temperature, s.seed, s.max_tokens), s))
        put(row, "usage", self._usage.setdefault((u.prompt_tokens, u.completion_tokens), u))
        put(row, "outcome", sys.intern(run.outcome))
        if run.failure is not None:
            put(row, "failure", sys.intern(run.failure))
        put(row, "calls", _EMPTY)
        put(row, "messages", _EMPTY)
        put(row, "check", _EMPTY)
        put(row, "interventions", _prepare_choices(run.interventions))
        put(row, "__pydantic_fields_set__", _FIELDS_SET)
        put(row, "__pydantic_extra__", None)
        put(row, "__pydantic_private__", None)
        return row


def _prepare_choices(interventions: list[Intervention]) -> list[Intervention]:
    kept = [i for i in interventions if i.action == "prepare"]
    return kept or _EMPTY


@dataclass
class _CellSample:
    """The whole records of one cell that a drill-down with up to `limit` failed runs can show."""

    limit: int
    passing: tuple[Rank, RunRecord] | None = None
    first_of: dict[str | None, tuple[Rank, RunRecord]] = field(default_factory=dict)
    lowest: list[tuple[int, int, RunRecord]] = field(default_factory=list)  # max-heap: (-index, -order, run)

    def offer(self, run: RunRecord, order: int) -> None:
        if not run.counted:
            return
        rank = (run.index, order)
        if run.correct:
            if self.passing is None or rank < self.passing[0]:
                self.passing = (rank, run)
            return
        first = self.first_of.get(run.failure)
        if first is None or rank < first[0]:
            self.first_of[run.failure] = (rank, run)
        entry = (-run.index, -order, run)
        if len(self.lowest) < self.limit:
            heapq.heappush(self.lowest, entry)
        elif self.lowest and entry > self.lowest[0]:
            heapq.heapreplace(self.lowest, entry)

    def records(self) -> list[RunRecord]:
        kept: dict[Rank, RunRecord] = dict(self.first_of.values())
        kept.update(((-i, -o), run) for i, o, run in self.lowest)
        if self.passing is not None:
            kept[self.passing[0]] = self.passing[1]
        return [kept[rank] for rank in sorted(kept)]


def scan_results(paths: Iterable[str | Path], transcripts: int = 3) -> Results:
    """`load_results` with `RunSummary` rows in `runs` and, in `Results.transcripts`, the whole
    records a drill-down showing up to `transcripts` failed runs per cell picks from."""
    if transcripts < 0:
        raise ValueError(f"transcripts must be at least 0, not {transcripts}")
    rows = _Rows()
    samples: dict[Key, _CellSample] = {}
    arrivals = 0

    def keep(run: RunRecord) -> RunRecord:
        nonlocal arrivals
        arrivals += 1
        key = run.cell.key()
        sample = samples.get(key)
        if sample is None:
            sample = samples[key] = _CellSample(transcripts)
        sample.offer(run, arrivals)
        return rows.summary(run)

    results = load_results(paths, keep)
    results.transcripts = {key: sample.records() for key, sample in samples.items()}
    results.transcript_limit = transcripts
    return results
