"""A report's and the gate's cells as row numbers of a `RunTable`, and the report's pairing of two
cells on arrays: both held against the plain computation on lists of records (what they replaced,
and what `load_results`'s lists still get)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.report.comparisons import DiscordantPairs
from evalkit.results.records import Cell, RunRecord
from evalkit.results.table import RunSelection, RunTable, group_runs
from tests.report import records

OUTCOMES = ("terminal_tool", "final_answer", "infra_error", "unsupported")
# (scenario, strategy, run index, seed, outcome)
RUN = st.tuples(
    st.sampled_from(["s1", "s2", "s3"]),
    st.sampled_from(["a", "b"]),
    st.integers(0, 4),
    st.integers(0, 2),
    st.sampled_from(OUTCOMES),
)


def _record(scenario: str, strategy: str, index: int, seed: int, outcome: str) -> RunRecord:
    family = "f2" if scenario == "s3" else "f1"
    return records.run(
        scenario=scenario,
        family=family,
        strategy=strategy,
        index=index,
        seed=seed,
        outcome=outcome,
        completed=outcome == "terminal_tool",
    )


def _table(runs: Sequence[RunRecord]) -> RunTable:
    table = RunTable()
    for run in runs:
        table.append(run)
    return table


def _cells_of(cell: Cell) -> tuple[tuple[str, str], ...]:
    return (("all", cell.strategy), (cell.family, cell.strategy), (cell.scenario, cell.strategy))


def _seen(runs: Sequence[RunRecord]) -> list[tuple[object, ...]]:
    return [(r.run_id, r.outcome, r.seed, r.counted, r.correct) for r in runs]


@settings(max_examples=150, deadline=None)
@given(st.lists(RUN, max_size=40))
def test_a_tables_groups_hold_the_runs_a_list_would_in_the_same_order(spec: list[tuple]) -> None:
    runs = [_record(*s) for s in spec]
    from_list = group_runs(runs, _cells_of)
    from_table = group_runs(_table(runs), _cells_of)
    assert all(isinstance(g, RunSelection) and g.rows.dtype == np.int32 for g in from_table.values())
    assert {k: _seen(g) for k, g in from_table.items()} == {k: _seen(g) for k, g in from_list.items()}


def _reference(a: Sequence[RunRecord], b: Sequence[RunRecord]) -> tuple[int, int] | None:
    """The pairing rule written out on dicts: counted runs pair one to one by (scenario, index, seed)."""

    def keyed(runs: Sequence[RunRecord]) -> dict[tuple[str, int, int], bool] | None:
        keys = [(r.cell.scenario, r.index, r.seed) for r in runs if r.counted]
        if len(set(keys)) != len(keys):
            return None
        return {(r.cell.scenario, r.index, r.seed): r.correct for r in runs if r.counted}

    left, right = keyed(a), keyed(b)
    if left is None or right is None or not left or left.keys() != right.keys():
        return None
    return sum(left[k] and not right[k] for k in left), sum(right[k] and not left[k] for k in left)


# runs that pair: one key per (scenario, index), each with an outcome per strategy; then, sometimes,
# a run of one side dropped or repeated, a key repeated on both sides, or one seed changed
PAIRED = st.tuples(
    st.lists(
        st.tuples(
            st.sampled_from(["s1", "s2", "s3"]), st.integers(0, 9), st.sampled_from(OUTCOMES), st.sampled_from(OUTCOMES)
        ),
        max_size=25,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.sampled_from(["none", "drop", "repeat", "repeat both", "reseed"]),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(PAIRED, st.lists(RUN, max_size=30)))
def test_discordant_pairs_on_arrays_match_the_rule_on_dicts(spec: tuple | list) -> None:
    if isinstance(spec, tuple):
        keys, change = spec
        runs = [_record(s, "a", i, i, x) for s, i, x, _y in keys] + [_record(s, "b", i, i, y) for s, i, _x, y in keys]
        if runs and change == "drop":
            runs.pop()
        elif runs and change == "repeat":
            runs.append(runs[-1])
        elif runs and change == "repeat both":  # each side holds one key twice: no one-to-one pairing
            runs += [runs[0], runs[len(keys)]]
        elif runs and change == "reseed":
            runs[-1] = runs[-1].model_copy(update={"seed": 99})
    else:
        runs = [_record(*s) for s in spec]
    expected_counts: list[tuple[int, int] | None] = []
    for source in (runs, _table(runs)):
        groups = group_runs(source, lambda c: (c.strategy,))
        a, b = groups.get("a", []), groups.get("b", [])
        pairs = DiscordantPairs()
        assert pairs.count(a, b) == _reference(list(a), list(b))
        expected_counts.append(pairs.count(a, b))
        for side in (a, b):
            counted = [r for r in side if r.counted]
            rate = pairs.correct_rate(side, 0.95)
            measured = (rate.x, rate.n) if rate else None
            assert measured == ((sum(r.correct for r in counted), len(counted)) if counted else None)
    assert expected_counts[0] == expected_counts[1]
