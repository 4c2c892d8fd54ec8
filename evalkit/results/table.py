"""The runs a report or the gate reads, held in columns: about 80 bytes a run instead of a Python
object of about 1.7 KB, so a million-record file fits in a few hundred megabytes.

`RunTable` is a sequence of runs: indexing or iterating it makes a `RowView`, a `RunRow` read from
the columns (`evalkit.results.columns`) when asked for, with no transcript fields at all.

A report's cells and the gate's are `RunSelection`s: row numbers of the table (4 bytes a run a cell,
where a list of rows costs about 60), made by `group_runs`; `pair_keys` reads the columns the
report pairs two cells by, without a row object a run. With both, a report on a million runs holds
the table and a few arrays, not a Python object a run (docs/benchmarks.md).

Repeated run ids are resolved after reading, as `load_results` resolves them while it reads: the
first record of a run id is kept unless it is an `infra_error` a later record supersedes
(`evalkit.results.reader.supersedes`); other repeats are counted, and listed when their verdict
differs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TypeVar, overload

import numpy as np

from evalkit.results.columns import Columns, RowView
from evalkit.results.records import Cell
from evalkit.results.runs import RunRow

__all__ = ["RunSelection", "RunTable", "group_runs", "pair_keys"]

K = TypeVar("K", bound=Hashable)
# a run's pair key (scenario, run index, seed), the scenario as a number a caller's dict gives it
PAIR_KEY = np.dtype([("scenario", np.int32), ("index", np.int32), ("seed", np.int64)])


class RunTable(Sequence[RunRow]):
    """Runs in columns (see the module's docstring); `append` takes a validated record or row."""

    def __init__(self) -> None:
        self._c = Columns()

    def append(self, run: RunRow) -> None:
        self._c.append(run)

    def resolve_repeats(self) -> tuple[int, list[str]]:
        """Keep one record per run id (see the module's docstring); (repeats, conflicts)."""
        c = self._c
        if not c.rows:
            return 0, []
        # a writer's run id is its cell and index: one 64-bit key (cell high, index low), sorted by numpy
        # instead of a dict of a million strings
        keys = np.frombuffer(c.cell, dtype=np.int32).astype(np.int64) << 32
        keys |= np.frombuffer(c.index, dtype=np.int32).astype(np.int64) & 0xFFFFFFFF
        for row, run_id in c.ids.items():  # other ids: numbered apart from the writer's
            keys[row] = -1 - c.texts.number(run_id, run_id)
        # stable: within a run id the records stay in file order, which `supersedes` decides by
        order = np.argsort(keys, kind="stable")
        same = np.nonzero(keys[order][1:] == keys[order][:-1])[0]
        if not same.size:
            return 0, []
        from evalkit.results.reader import supersedes  # the reader's one rule

        drop, repeats, conflicts = set(), 0, []
        groups = np.split(order, np.nonzero(np.diff(keys[order]))[0] + 1)
        for group in (g for g in groups if g.size > 1):
            kept = int(group[0])
            for later in map(int, group[1:]):
                if supersedes(self[kept].outcome):
                    drop.add(kept)
                    kept = later
                    continue
                drop.add(later)
                repeats += 1
                if _verdict(self[kept]) != _verdict(self[later]):
                    conflicts.append(f"{self[later].run_id} ({self[kept].outcome} then {self[later].outcome})")
        c.keep([row for row in range(c.rows) if row not in drop])
        return repeats, conflicts

    def __len__(self) -> int:
        return self._c.rows

    @overload
    def __getitem__(self, i: int) -> RunRow: ...

    @overload
    def __getitem__(self, i: slice) -> list[RunRow]: ...

    def __getitem__(self, i: int | slice) -> RunRow | list[RunRow]:
        rows = self._c.rows
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(rows))]
        if not -rows <= i < rows:
            raise IndexError("run index out of range")
        return RowView(self._c, i % rows)

    def __iter__(self) -> Iterator[RunRow]:
        for i in range(self._c.rows):
            yield RowView(self._c, i)

    @property
    def any_simulated(self) -> bool:
        return any(flags & 1 for flags in self._c.flags)

    # --- selections ----------------------------------------------------------------------------

    def group(self, keys_of: Callable[[Cell], Iterable[K]]) -> dict[K, RunSelection]:
        """The rows of each group `keys_of` puts a cell's runs in (one run may be in several), in
        file order, held as row numbers: 4 bytes a run a group, not a row object each."""
        if not self._c.rows:
            return {}
        # the rows sorted by cell once; each cell's rows are then one slice, found by binary search
        cells = self._c.cell_values.values
        numbers = np.frombuffer(self._c.cell, dtype=np.int32)
        order = np.argsort(numbers, kind="stable").astype(np.int32)
        bounds = np.searchsorted(numbers[order], np.arange(len(cells) + 1))
        del numbers  # the array may grow again only when no view of it is alive
        parts: dict[K, list[np.ndarray]] = defaultdict(list)
        for number, cell in enumerate(cells):
            if bounds[number] < bounds[number + 1]:
                for key in keys_of(cell):
                    parts[key].append(order[bounds[number] : bounds[number + 1]])
        return {key: RunSelection(self, np.sort(np.concatenate(rows))) for key, rows in parts.items()}

    def pair_keys(self, rows: np.ndarray, scenarios: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`pair_keys` for some rows, from the columns."""
        c = self._c
        numbers = np.array([scenarios.setdefault(x.scenario, len(scenarios)) for x in c.cell_values.values], np.int32)
        keys = np.empty(len(rows), PAIR_KEY)
        keys["scenario"] = numbers[np.frombuffer(c.cell, dtype=np.int32)[rows]]
        keys["index"] = np.frombuffer(c.index, dtype=np.int32)[rows]
        keys["seed"] = np.frombuffer(c.seed, dtype=np.int64)[rows]
        flags = np.frombuffer(c.flags, dtype=np.uint8)[rows]
        return keys, flags & 16 != 0, flags & 4 != 0


class RunSelection(Sequence[RunRow]):
    """Some runs of a `RunTable`, by row number: a cell's runs in a report or the gate."""

    __slots__ = ("rows", "table")

    def __init__(self, table: RunTable, rows: np.ndarray) -> None:
        self.table, self.rows = table, np.asarray(rows, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> RunRow: ...

    @overload
    def __getitem__(self, i: slice) -> list[RunRow]: ...

    def __getitem__(self, i: int | slice) -> RunRow | list[RunRow]:
        if isinstance(i, slice):
            return [self.table[int(row)] for row in self.rows[i]]
        return self.table[int(self.rows[i])]

    def __iter__(self) -> Iterator[RunRow]:
        columns = self.table._c
        for row in self.rows.tolist():
            yield RowView(columns, row)


def group_runs(runs: Sequence[RunRow], keys_of: Callable[[Cell], Iterable[K]]) -> dict[K, Sequence[RunRow]]:
    """Runs grouped by the keys `keys_of` gives their cell (one run may be in several groups), in
    the order of `runs`: `RunTable.group` for a table, lists otherwise."""
    # a table groups from its columns, as row numbers; `dict` only widens the value type
    if isinstance(runs, RunTable):
        return dict(runs.group(keys_of))
    groups: dict[K, list[RunRow]] = defaultdict(list)
    keys: dict[tuple[str, ...], list[K]] = {}
    for run in runs:
        cell = run.cell
        key = (*cell.key(), cell.family)
        found = keys.get(key)
        # `keys_of` once per distinct cell, not once per run
        if found is None:
            found = keys[key] = list(keys_of(cell))
        for group in found:
            groups[group].append(run)
    return dict(groups)


def pair_keys(runs: Sequence[RunRow], scenarios: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's pair key (`PAIR_KEY`; `scenarios` numbers the scenario names, and is extended), and
    whether it was counted and correct: three arrays in the order of `runs`, from a table's columns
    where `runs` is a `RunSelection`."""
    if isinstance(runs, RunSelection):
        return runs.table.pair_keys(runs.rows, scenarios)
    keys = np.array(
        [(scenarios.setdefault(r.cell.scenario, len(scenarios)), r.index, r.seed) for r in runs], dtype=PAIR_KEY
    )
    counted = np.array([r.counted for r in runs], dtype=bool)
    return keys, counted, np.array([r.correct for r in runs], dtype=bool)


def _verdict(run: RunRow) -> tuple[str, bool, bool, str | None]:
    return (run.outcome, run.completed, run.correct, run.failure)
