"""The runs a report or the gate reads, held in columns: about 80 bytes a run instead of a Python
object of about 1.7 KB, so a million-record file fits in a few hundred megabytes.

`RunTable` is a sequence of runs: indexing or iterating it makes a `RunRow`, a view with the fields
of a `RunRecord` without its transcript (`calls`, `messages` and `check` empty, `interventions` the
`prepare` choices only), read from the columns when asked for. Values that repeat (the cell, the
sampling settings, the outcome, the failure category, the error text, the scenario hash, the
prepare choices) are stored once and referred to by number. A run id is stored only when it is not
the writer's own (`backend/mode/strategy/scenario/index`).

A report's cells and the gate's are `RunSelection`s: row numbers of the table (4 bytes a run a cell,
where a list of `RunRow`s costs about 60), made by `group_runs`; `pair_keys` reads the columns the
report pairs two cells by, without a `RunRow` a run. With both, a report on a million runs holds
the table and a few arrays, not a Python object a run (docs/benchmarks.md).

Repeated run ids are resolved after reading, as `load_results` resolves them while it reads: the
first record of a run id is kept unless it is an `infra_error` a later record supersedes
(`evalkit.results.reader.supersedes`); other repeats are counted, and listed when their verdict
differs.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from evalkit.chat import Sampling, Usage
from evalkit.results.records import NOT_COUNTED, Cell, Intervention, RunRecord

__all__ = ["RunRow", "RunSelection", "RunTable", "group_runs", "pair_keys"]

K = TypeVar("K", bound=Hashable)
# a run's pair key (scenario, run index, seed), the scenario as a number a caller's dict gives it
PAIR_KEY = np.dtype([("scenario", np.int32), ("index", np.int32), ("seed", np.int64)])

_EMPTY: list[Any] = []
_COUNTERS = 6  # retries, guard fires, model calls, iterations, ideal iterations, wasted calls


class _Shared:
    """Values stored once, each given a number in order of first appearance."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._numbers: dict[Any, int] = {}

    def number(self, value: Any, key: Any = None) -> int:
        key = value if key is None else key
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self.values)
            self.values.append(value)
        return found


class RunTable(Sequence[RunRecord]):
    """Runs in columns (see the module's docstring); `append` takes a validated record or head."""

    def __init__(self) -> None:
        self._cells, self._shared = _Shared(), {name: _Shared() for name in ("sampling", "text", "choices")}
        # the fields read most, as references to the shared values (8 bytes a run): no lookup to read them
        self.cells: list[Cell] = []
        self.outcomes: list[str] = []
        self._cell, self._index, self._seed = array("i"), array("i"), array("q")
        self._codes = array("i")  # failure, error, scenario hash: numbers into `text` (−1: None)
        self._flags = array("B")
        self._counters = array("i")
        self._tokens = array("i")
        self._times = array("d")
        self._refs = array("i")  # sampling, prepare choices
        self._ids: dict[int, str] = {}  # row → run id, where it is not the writer's own
        self._served: dict[int, Any] = {}  # row → `Served`, for the runs behind a chain of server phases
        self._restarts: dict[int, Any] = {}  # row → its `phase_restarts`, for the few runs that have some
        self._rows = 0

    # --- building ------------------------------------------------------------------------------

    def append(self, run: Any) -> None:
        cell, text = run.cell, self._shared["text"]
        number = self._cells.number(cell, cell.key())
        self._cell.append(number)
        self.cells.append(self._cells.values[number])
        self.outcomes.append(text.values[text.number(run.outcome)])
        self._index.append(run.index)
        self._seed.append(run.seed)
        failure, error, scenario_hash = run.failure, run.error, run.scenario_hash
        self._codes.extend(
            (
                -1 if failure is None else text.number(failure),
                -1 if error is None else text.number(error),
                -1 if scenario_hash is None else text.number(scenario_hash),
            )
        )
        counted = run.outcome not in NOT_COUNTED
        self._flags.append(run.simulated | run.completed << 1 | run.correct << 2 | run.first_try << 3 | counted << 4)
        self._counters.extend(
            (run.retries, run.guard_fires, run.model_calls, run.iterations, run.ideal_iterations, run.wasted_calls)
        )
        usage, s = run.usage, run.sampling
        self._tokens.extend((usage.prompt_tokens, usage.completion_tokens))
        self._times.extend((run.latency_s, run.wall_s))
        self._refs.append(self._shared["sampling"].number(s, (s.temperature, s.seed, s.max_tokens)))
        self._refs.append(self._choices(run.interventions))
        if run.run_id != _writers_id(cell, run.index):
            self._ids[self._rows] = run.run_id
        if run.served is not None:
            self._served[self._rows] = run.served
        if run.phase_restarts:
            self._restarts[self._rows] = run.phase_restarts
        self._rows += 1

    def _choices(self, interventions: list[Intervention]) -> int:
        if not interventions:
            return self._shared["choices"].number(_EMPTY, ())
        choices = [i for i in interventions if i.action == "prepare"]
        return self._shared["choices"].number(choices or _EMPTY, tuple(i.model_dump_json() for i in choices))

    def resolve_repeats(self) -> tuple[int, list[str]]:
        """Keep one record per run id (see the module's docstring); (repeats, conflicts)."""
        if not self._rows:
            return 0, []
        keys = np.frombuffer(self._cell, dtype=np.int32).astype(np.int64) << 32
        keys |= np.frombuffer(self._index, dtype=np.int32).astype(np.int64) & 0xFFFFFFFF
        for row, run_id in self._ids.items():  # other ids: numbered apart from the writer's
            keys[row] = -1 - self._shared["text"].number(run_id)
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
        self._keep([row for row in range(self._rows) if row not in drop])
        return repeats, conflicts

    def _keep(self, rows: list[int]) -> None:
        self.cells = [self.cells[row] for row in rows]
        self.outcomes = [self.outcomes[row] for row in rows]
        for name, width in (("_cell", 1), ("_index", 1), ("_seed", 1), ("_codes", 3), ("_flags", 1)):
            setattr(self, name, _select(getattr(self, name), rows, width))
        self._counters = _select(self._counters, rows, _COUNTERS)
        self._tokens, self._times, self._refs = (_select(a, rows, 2) for a in (self._tokens, self._times, self._refs))
        moved = {old: new for new, old in enumerate(rows)}
        self._ids = {moved[row]: run_id for row, run_id in self._ids.items() if row in moved}
        self._served = {moved[row]: served for row, served in self._served.items() if row in moved}
        self._restarts = {moved[row]: found for row, found in self._restarts.items() if row in moved}
        self._rows = len(rows)

    # --- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._rows

    @overload
    def __getitem__(self, i: int) -> RunRecord: ...

    @overload
    def __getitem__(self, i: slice) -> list[RunRecord]: ...

    def __getitem__(self, i: int | slice) -> RunRecord | list[RunRecord]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._rows))]
        if not -self._rows <= i < self._rows:
            raise IndexError("run index out of range")
        return RunRow(self, i % self._rows)  # type: ignore[return-value]

    def __iter__(self) -> Iterator[RunRecord]:
        for i in range(self._rows):
            yield RunRow(self, i)  # type: ignore[misc]

    @property
    def any_simulated(self) -> bool:
        return any(flags & 1 for flags in self._flags)

    # --- selections ----------------------------------------------------------------------------

    def group(self, keys_of: Callable[[Cell], Iterable[K]]) -> dict[K, RunSelection]:
        """The rows of each group `keys_of` puts a cell's runs in (one run may be in several), in
        file order, held as row numbers: 4 bytes a run a group, not a `RunRow` each."""
        if not self._rows:
            return {}
        numbers = np.frombuffer(self._cell, dtype=np.int32)
        order = np.argsort(numbers, kind="stable").astype(np.int32)
        bounds = np.searchsorted(numbers[order], np.arange(len(self._cells.values) + 1))
        del numbers  # the array may grow again only when no view of it is alive
        parts: dict[K, list[np.ndarray]] = defaultdict(list)
        for number, cell in enumerate(self._cells.values):
            if bounds[number] < bounds[number + 1]:
                for key in keys_of(cell):
                    parts[key].append(order[bounds[number] : bounds[number + 1]])
        return {key: RunSelection(self, np.sort(np.concatenate(rows))) for key, rows in parts.items()}

    def pair_keys(self, rows: np.ndarray, scenarios: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`pair_keys` for some rows, from the columns."""
        numbers = np.array([scenarios.setdefault(c.scenario, len(scenarios)) for c in self._cells.values], np.int32)
        keys = np.empty(len(rows), PAIR_KEY)
        keys["scenario"] = numbers[np.frombuffer(self._cell, dtype=np.int32)[rows]]
        keys["index"] = np.frombuffer(self._index, dtype=np.int32)[rows]
        keys["seed"] = np.frombuffer(self._seed, dtype=np.int64)[rows]
        flags = np.frombuffer(self._flags, dtype=np.uint8)[rows]
        return keys, flags & 16 != 0, flags & 4 != 0


class RunSelection(Sequence[RunRecord]):
    """Some runs of a `RunTable`, by row number: a cell's runs in a report or the gate."""

    __slots__ = ("rows", "table")

    def __init__(self, table: RunTable, rows: np.ndarray) -> None:
        self.table, self.rows = table, np.asarray(rows, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> RunRecord: ...

    @overload
    def __getitem__(self, i: slice) -> list[RunRecord]: ...

    def __getitem__(self, i: int | slice) -> RunRecord | list[RunRecord]:
        if isinstance(i, slice):
            return [self.table[int(row)] for row in self.rows[i]]
        return self.table[int(self.rows[i])]

    def __iter__(self) -> Iterator[RunRecord]:
        table = self.table
        for row in self.rows.tolist():
            yield RunRow(table, row)  # type: ignore[misc]


def group_runs(runs: Sequence[RunRecord], keys_of: Callable[[Cell], Iterable[K]]) -> dict[K, Sequence[RunRecord]]:
    """Runs grouped by the keys `keys_of` gives their cell (one run may be in several groups), in
    the order of `runs`: `RunTable.group` for a table, lists otherwise."""
    if isinstance(runs, RunTable):
        return runs.group(keys_of)  # type: ignore[return-value]
    groups: dict[K, list[RunRecord]] = defaultdict(list)
    keys: dict[tuple[str, ...], list[K]] = {}
    for run in runs:
        cell = run.cell
        key = (*cell.key(), cell.family)
        found = keys.get(key)
        if found is None:
            found = keys[key] = list(keys_of(cell))
        for group in found:
            groups[group].append(run)
    return dict(groups)


def pair_keys(runs: Sequence[RunRecord], scenarios: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _writers_id(cell: Cell, index: int) -> str:
    return f"{cell.backend}/{cell.mode}/{cell.strategy}/{cell.scenario}/{index}"


def _select(values: array, rows: list[int], width: int) -> array:  # type: ignore[type-arg]
    out = array(values.typecode)
    for row in rows:
        out.extend(values[row * width : (row + 1) * width])
    return out


def _verdict(run: Any) -> tuple[str, bool, bool, str | None]:
    return (run.outcome, run.completed, run.correct, run.failure)


class RunRow:
    """One run of a `RunTable`, read as a `RunRecord` without its transcript is (read-only)."""

    __slots__ = ("_i", "_t")
    type = "run"

    def __init__(self, table: RunTable, i: int) -> None:
        self._t, self._i = table, i

    def _text(self, slot: int) -> Any:
        number = self._t._codes[self._i * 3 + slot]
        return None if number < 0 else self._t._shared["text"].values[number]

    @property
    def cell(self) -> Cell:
        return self._t.cells[self._i]

    @property
    def outcome(self) -> str:
        return self._t.outcomes[self._i]

    @property
    def index(self) -> int:
        return self._t._index[self._i]

    @property
    def seed(self) -> int:
        return self._t._seed[self._i]

    @property
    def run_id(self) -> str:
        return self._t._ids.get(self._i) or _writers_id(self.cell, self.index)

    failure = property(lambda self: self._text(0))
    error = property(lambda self: self._text(1))
    scenario_hash = property(lambda self: self._text(2))
    simulated = property(lambda self: bool(self._t._flags[self._i] & 1))
    completed = property(lambda self: bool(self._t._flags[self._i] & 2))
    correct = property(lambda self: bool(self._t._flags[self._i] & 4))
    first_try = property(lambda self: bool(self._t._flags[self._i] & 8))
    counted = property(lambda self: bool(self._t._flags[self._i] & 16))  # `RunRecord.counted`
    retries = property(lambda self: self._t._counters[self._i * 6])
    guard_fires = property(lambda self: self._t._counters[self._i * 6 + 1])
    model_calls = property(lambda self: self._t._counters[self._i * 6 + 2])
    iterations = property(lambda self: self._t._counters[self._i * 6 + 3])
    ideal_iterations = property(lambda self: self._t._counters[self._i * 6 + 4])
    wasted_calls = property(lambda self: self._t._counters[self._i * 6 + 5])
    latency_s = property(lambda self: self._t._times[self._i * 2])
    wall_s = property(lambda self: self._t._times[self._i * 2 + 1])
    served = property(lambda self: self._t._served.get(self._i))
    phase_restarts = property(lambda self: self._t._restarts.get(self._i, _EMPTY))
    calls = property(lambda self: _EMPTY)
    messages = property(lambda self: _EMPTY)
    check = property(lambda self: _EMPTY)

    @property
    def usage(self) -> Usage:
        i = self._i * 2
        return Usage.model_construct(prompt_tokens=self._t._tokens[i], completion_tokens=self._t._tokens[i + 1])

    @property
    def sampling(self) -> Sampling:
        return self._t._shared["sampling"].values[self._t._refs[self._i * 2]]  # type: ignore[no-any-return]

    @property
    def interventions(self) -> list[Intervention]:
        return self._t._shared["choices"].values[self._t._refs[self._i * 2 + 1]]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"RunRow({self.run_id!r}, {self.outcome})"
