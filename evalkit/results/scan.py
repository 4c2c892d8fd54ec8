"""Reading results files for a report or the gate in memory that does not grow with the transcripts.

`scan_results` reads each file once, line by line, through `load_results` (so integrity sees every
record: segment counts, repeats, conflicting verdicts, footers), and stores the runs in a
`RunTable` (`evalkit.results.table`): columns of about 80 bytes a run, without transcripts (no
calls, messages or check items; of the interventions only the `prepare` choices the report
tallies), read back as `RowView`s (`RunRow`s without a transcript). A file of a million runs
(several gigabytes with their transcripts) is read in a few hundred megabytes. Per cell it keeps
whole only the records a report's drill-down can show: the first passing run, the first failing run
of each failure category and the first `transcripts` failing runs (by run index), which are exactly
the runs `pick_passing` and `pick_failed` choose from all of them.

A run line is validated through a model of the record without its transcript fields (faster than
`json.loads`: they are skipped by the JSON parser and never become Python objects), whatever the
order of its fields; the lines kept whole are validated whole, so a malformed transcript is an
error where it would be shown. A transcript field that is valid JSON but not a valid transcript, in a run no
drill-down shows, goes unseen by a report or the gate (`load_results`, as `rescore` reads, sees it).
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ConfigDict, Field

from evalkit.results.reader import load_results, parse_record
from evalkit.results.records import Intervention, RunHead, RunRecord
from evalkit.results.runs import Results, RunRow
from evalkit.results.table import RunTable

__all__ = ["rows_held", "scan_results"]

Key = tuple[str, ...]
# (run index, arrival order): the order `pick_failed` and `pick_passing` rank runs in
Rank = tuple[int, int]


class _RunHead(RunHead):
    """A run line as the table reads it: the head, and of the transcript only the interventions (the
    table keeps their `prepare` choices); the other transcript fields are ignored unread."""

    model_config = ConfigDict(extra="ignore")

    interventions: list[Intervention] = Field(default_factory=list)

    @property
    def prepared(self) -> list[Intervention]:
        return [i for i in self.interventions if i.action == "prepare"]


@dataclass
class _CellSample:
    """The whole records of one cell that a drill-down with up to `limit` failed runs can show."""

    limit: int
    passing: tuple[Rank, RunRecord] | None = None
    first_of: dict[str | None, tuple[Rank, RunRecord]] = field(default_factory=dict)
    lowest: list[tuple[int, int, RunRecord]] = field(default_factory=list)  # max-heap: (-index, -order, run)

    def offer(self, run: RunRow, order: int, whole: Callable[[], RunRecord]) -> None:
        """Keep `whole()` (made at most once) wherever `run` ranks among the runs kept so far."""
        # a drill-down shows counted runs only: an infra error has no transcript worth keeping
        if not run.counted:
            return
        # by run index, then arrival: the order `pick_failed` and `pick_passing` rank all runs in
        rank = (run.index, order)
        # parsing a whole line is the costly part: done only if the run ranks somewhere, and once
        made: list[RunRecord] = []

        def record() -> RunRecord:
            if not made:
                made.append(whole())
            return made[0]

        if run.correct:
            if self.passing is None or rank < self.passing[0]:
                self.passing = (rank, record())
            return
        if not self.limit:  # `pick_failed(runs, 0)` picks none (the gate reads with 0)
            return
        first = self.first_of.get(run.failure)
        if first is None or rank < first[0]:
            self.first_of[run.failure] = (rank, record())
        # the `limit` lowest-ranked failures, as a max-heap on the rank: the worst kept one leaves first
        if len(self.lowest) < self.limit:
            heapq.heappush(self.lowest, (-run.index, -order, record()))
        elif self.lowest and (-run.index, -order) > self.lowest[0][:2]:
            heapq.heapreplace(self.lowest, (-run.index, -order, record()))

    def records(self) -> list[RunRecord]:
        # by rank: a run kept for two reasons (first of its category and among the lowest) is kept once
        kept: dict[Rank, RunRecord] = dict(self.first_of.values())
        kept.update(((-i, -o), run) for i, o, run in self.lowest)
        if self.passing is not None:
            kept[self.passing[0]] = self.passing[1]
        return [kept[rank] for rank in sorted(kept)]


class _Scanner:
    """The `RunReader` of `scan_results`: runs into a `RunTable`, whole records for the samples."""

    def __init__(self, transcripts: int) -> None:
        self.transcripts = transcripts
        self.table = RunTable()
        self.samples: dict[Key, _CellSample] = {}
        self.arrivals = 0
        self._line: tuple[str, int, str] | None = None  # the line `parse` read last, for `store`

    def parse(self, path: str, lineno: int, line: str) -> RunRow:
        head = _RunHead.model_validate_json(line)  # the transcript's fields are skipped, never built
        self._line = (path, lineno, line)
        return head

    def store(self, run: RunRow) -> None:
        self.arrivals += 1
        self.table.append(run)
        key = run.cell.key()
        sample = self.samples.get(key)
        if sample is None:
            sample = self.samples[key] = _CellSample(self.transcripts)
        # taken and reset: a later run read whole (`parse` refused its line) must not find this one
        line, self._line = self._line, None
        if isinstance(run, RunRecord):  # read whole (not by `parse`)
            sample.offer(self.table[-1], self.arrivals, lambda: run)
        elif line is not None:
            # offered the table's row, not the head: the row is what stays; the head is dropped here
            sample.offer(self.table[-1], self.arrivals, lambda: _whole(*line))

    def finish(self) -> tuple[Sequence[RunRow], int, list[str]]:
        repeats, conflicts = self.table.resolve_repeats()
        return self.table, repeats, conflicts


def _whole(path: str, lineno: int, line: str) -> RunRecord:
    record = parse_record(path, lineno, line)
    assert isinstance(record, RunRecord)  # its head was read as a run record
    return record


# a full pass runs after this many passes of the middle generation: never, in practice
_NO_FULL_PASS = 2**31 - 1


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The rows form no reference cycles, but each of them counts towards the cyclic collector's next
    pass over every object alive: pausing it while they are read saves about a fifth of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def rows_held() -> Iterator[None]:
    """While a command works on the rows it read: no full pass of the cyclic collector (the rows form
    no cycles; walking 81,600 of them again and again cost a report 0.4 s); the young generations are
    collected as usual. On exit the caller's thresholds are back, so a caller in the same process loses
    nothing. Not `gc.freeze()`: its `unfreeze` releases every frozen object, also those the caller froze
    (CPython 3.12 itself starts with the immortal tuples of its static types frozen)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], _NO_FULL_PASS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def scan_results(paths: Iterable[str | Path], transcripts: int = 3) -> Results[RunRow]:
    """`load_results` with a `RunTable` in `runs` and, in `Results.transcripts`, the whole
    records a drill-down showing up to `transcripts` failed runs per cell picks from."""
    if transcripts < 0:
        raise ValueError(f"transcripts must be at least 0, not {transcripts}")
    scanner = _Scanner(transcripts)
    with _collector_paused():
        results = load_results(paths, scanner)
    results.transcripts = {key: sample.records() for key, sample in scanner.samples.items()}
    results.transcript_limit = transcripts
    return results
