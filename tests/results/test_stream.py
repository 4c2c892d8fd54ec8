"""`kept_runs` yields the records `load_results` keeps (the reference: the reader's own rule for
repeated run ids, `supersedes`), one at a time, whatever the order of repeats and infra errors."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.results.reader import load_results
from evalkit.results.stream import kept_runs
from tests.report import records

OUTCOMES = ("infra_error", "terminal_tool", "final_answer")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.sampled_from(OUTCOMES), st.sampled_from(("a", "b"))), max_size=14),
    st.sampled_from(("a", "b", "ab")),
)
def test_the_records_kept_are_those_the_reader_keeps(draws: list[tuple[int, str, str]], wanted: str) -> None:
    runs = [
        records.run(index=i, outcome=outcome, strategy=strategy, error=f"record {n}").model_copy(
            update={"run_id": f"run {i}"}  # one run id across strategies too: the reader keys on the id alone
        )
        for n, (i, outcome, strategy) in enumerate(draws)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = records.write_results(Path(tmp) / "r.jsonl", runs, runs_per_cell=5)
        expected = [r for r in load_results([path]).runs if r.cell.strategy in wanted]
        got = list(kept_runs([path], lambda cell: cell.strategy in wanted))
    assert sorted(r.model_dump_json() for r in got) == sorted(r.model_dump_json() for r in expected)
