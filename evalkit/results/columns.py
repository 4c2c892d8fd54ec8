"""The columns of a run table (`evalkit.results.table`), and `RowView`, one run read from them.

A run costs about 80 bytes here instead of a `RunRecord` of about 1.7 KB. Values that repeat (the
cell, the sampling settings, the outcome, the failure category, the error text, the scenario hash,
the prepare choices) are stored once and referred to by number. A run id is stored only when it is
not the writer's own (`backend/mode/strategy/scenario/index`).

A `RowView` has the fields of `evalkit.results.runs.RunRow` and no others: the columns hold no
transcript, so a row has no `calls`, `messages`, `check` or `interventions` to read (a report takes
the whole records `Results.whole` kept instead).
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from evalkit.chat import Sampling, Usage
from evalkit.results.records import NOT_COUNTED, Cell, Intervention, PhaseRestart, Served
from evalkit.results.runs import RunRow

__all__ = ["Columns", "RowView", "writers_id"]

V = TypeVar("V")
N = TypeVar("N", int, float)

_NO_CHOICES: list[Intervention] = []
_NO_RESTARTS: list[PhaseRestart] = []
# the bits of a run's flags
_SIMULATED, _COMPLETED, _CORRECT, _FIRST_TRY, _COUNTED = 1, 2, 4, 8, 16
# how many numbers each run has in a column of several a run
WIDTHS = {"cell": 1, "index": 1, "seed": 1, "codes": 3, "flags": 1, "counters": 6, "tokens": 2, "times": 2, "refs": 2}


class Shared(Generic[V]):
    """Values stored once, each given a number in order of first appearance."""

    def __init__(self) -> None:
        self.values: list[V] = []
        self._numbers: dict[Hashable, int] = {}

    def number(self, value: V, key: Hashable) -> int:
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self.values)
            self.values.append(value)
        return found


class Columns:
    """The runs of a table, a column a field (see the module's docstring)."""

    def __init__(self) -> None:
        self.cell_values: Shared[Cell] = Shared()
        self.texts: Shared[str] = Shared()
        self.samplings: Shared[Sampling] = Shared()
        self.choices: Shared[Sequence[Intervention]] = Shared()
        # the fields read most, as references to the shared values (8 bytes a run): no lookup to read them
        self.cells: list[Cell] = []
        self.outcomes: list[str] = []
        self.cell, self.index, self.seed = array("i"), array("i"), array("q")
        self.codes = array("i")  # failure, error, scenario hash: numbers into `texts` (−1: None)
        self.flags = array("B")
        # retries, guard fires, model calls, iterations, ideal iterations, wasted calls
        self.counters = array("i")
        self.tokens = array("i")  # prompt, completion
        self.times = array("d")  # latency, wall
        self.refs = array("i")  # sampling, prepare choices
        self.ids: dict[int, str] = {}  # row → run id, where it is not the writer's own
        self.served: dict[int, Served] = {}  # row → its count, for the runs behind a chain of server phases
        self.restarts: dict[int, Sequence[PhaseRestart]] = {}  # row → its `phase_restarts`, for the few with some
        self.rows = 0

    def append(self, run: RunRow) -> None:
        cell, texts = run.cell, self.texts
        number = self.cell_values.number(cell, cell.key())
        self.cell.append(number)
        self.cells.append(self.cell_values.values[number])
        self.outcomes.append(texts.values[texts.number(run.outcome, run.outcome)])
        self.index.append(run.index)
        self.seed.append(run.seed)
        self.codes.extend(-1 if text is None else texts.number(text, text) for text in _texts(run))
        counted = run.outcome not in NOT_COUNTED
        # five booleans in one byte (the `_SIMULATED`… bits)
        self.flags.append(run.simulated | run.completed << 1 | run.correct << 2 | run.first_try << 3 | counted << 4)
        self.counters.extend(
            (run.retries, run.guard_fires, run.model_calls, run.iterations, run.ideal_iterations, run.wasted_calls)
        )
        usage, s = run.usage, run.sampling
        self.tokens.extend((usage.prompt_tokens, usage.completion_tokens))
        self.times.extend((run.latency_s, run.wall_s))
        # keyed by its values: a pydantic model is not hashable, and runs share a few settings
        self.refs.append(self.samplings.number(s, (s.temperature, s.seed, s.max_tokens)))
        choices = run.prepared
        # the key of no choices is cheap: most runs have none
        key = tuple(i.model_dump_json() for i in choices) if choices else ()
        self.refs.append(self.choices.number(choices or _NO_CHOICES, key))
        # a writer's own id is rebuilt when read (`RowView.run_id`): only other ids take memory
        if run.run_id != writers_id(cell, run.index):
            self.ids[self.rows] = run.run_id
        if run.served is not None:
            self.served[self.rows] = run.served
        if run.phase_restarts:
            self.restarts[self.rows] = run.phase_restarts
        self.rows += 1

    def keep(self, rows: list[int]) -> None:
        """Only these rows, in this order."""
        self.cells = [self.cells[row] for row in rows]
        self.outcomes = [self.outcomes[row] for row in rows]
        for name, width in WIDTHS.items():
            setattr(self, name, _select(getattr(self, name), rows, width))
        moved = {old: new for new, old in enumerate(rows)}
        self.ids = {moved[row]: run_id for row, run_id in self.ids.items() if row in moved}
        self.served = {moved[row]: served for row, served in self.served.items() if row in moved}
        self.restarts = {moved[row]: found for row, found in self.restarts.items() if row in moved}
        self.rows = len(rows)


def _texts(run: RunRow) -> tuple[str | None, str | None, str | None]:
    return run.failure, run.error, run.scenario_hash


def writers_id(cell: Cell, index: int) -> str:
    return f"{cell.backend}/{cell.mode}/{cell.strategy}/{cell.scenario}/{index}"


def _select(values: array[N], rows: list[int], width: int) -> array[N]:
    # an empty slice: a new array of the same type code
    out = values[:0]
    for row in rows:
        out.extend(values[row * width : (row + 1) * width])
    return out


class RowView:
    """One run of a run table: a `RunRow`, read from the columns when asked for (read-only)."""

    __slots__ = ("_c", "_i")

    def __init__(self, columns: Columns, i: int) -> None:
        self._c, self._i = columns, i

    def _text(self, slot: int) -> str | None:
        number = self._c.codes[self._i * 3 + slot]
        return None if number < 0 else self._c.texts.values[number]

    def _flag(self, bit: int) -> bool:
        return bool(self._c.flags[self._i] & bit)

    def _counter(self, slot: int) -> int:
        return self._c.counters[self._i * 6 + slot]

    @property
    def cell(self) -> Cell:
        return self._c.cells[self._i]

    @property
    def outcome(self) -> str:
        return self._c.outcomes[self._i]

    @property
    def index(self) -> int:
        return self._c.index[self._i]

    @property
    def seed(self) -> int:
        return self._c.seed[self._i]

    @property
    def run_id(self) -> str:
        return self._c.ids.get(self._i) or writers_id(self.cell, self.index)

    @property
    def failure(self) -> str | None:
        return self._text(0)

    @property
    def error(self) -> str | None:
        return self._text(1)

    @property
    def scenario_hash(self) -> str | None:
        return self._text(2)

    @property
    def simulated(self) -> bool:
        return self._flag(_SIMULATED)

    @property
    def completed(self) -> bool:
        return self._flag(_COMPLETED)

    @property
    def correct(self) -> bool:
        return self._flag(_CORRECT)

    @property
    def first_try(self) -> bool:
        return self._flag(_FIRST_TRY)

    @property
    def counted(self) -> bool:
        return self._flag(_COUNTED)

    @property
    def retries(self) -> int:
        return self._counter(0)

    @property
    def guard_fires(self) -> int:
        return self._counter(1)

    @property
    def model_calls(self) -> int:
        return self._counter(2)

    @property
    def iterations(self) -> int:
        return self._counter(3)

    @property
    def ideal_iterations(self) -> int:
        return self._counter(4)

    @property
    def wasted_calls(self) -> int:
        return self._counter(5)

    @property
    def latency_s(self) -> float:
        return self._c.times[self._i * 2]

    @property
    def wall_s(self) -> float:
        return self._c.times[self._i * 2 + 1]

    @property
    def served(self) -> Served | None:
        return self._c.served.get(self._i)

    @property
    def phase_restarts(self) -> Sequence[PhaseRestart]:
        return self._c.restarts.get(self._i, _NO_RESTARTS)

    @property
    def usage(self) -> Usage:
        i = self._i * 2
        return Usage.model_construct(prompt_tokens=self._c.tokens[i], completion_tokens=self._c.tokens[i + 1])

    @property
    def sampling(self) -> Sampling:
        return self._c.samplings.values[self._c.refs[self._i * 2]]

    @property
    def prepared(self) -> Sequence[Intervention]:
        return self._c.choices.values[self._c.refs[self._i * 2 + 1]]

    def __repr__(self) -> str:
        return f"RowView({self.run_id!r}, {self.outcome})"
