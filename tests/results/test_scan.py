"""`scan_results`: report and gate read a results file into compact rows and a
bounded sample of whole records per cell, and build exactly what they built from every record."""

from __future__ import annotations

import gc
import json
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.chat import Message
from evalkit.errors import ResultsError
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.report.data import build_report
from evalkit.report.transcripts import pick_failed, pick_passing, transcript
from evalkit.results.columns import RowView
from evalkit.results.reader import load_results
from evalkit.results.records import FAILURE_CATEGORIES, CheckItem, Intervention, RunRecord
from evalkit.results.scan import _RunHead, scan_results
from evalkit.run.runner import run_config
from tests.report import records
from tests.run.test_runner import config

_CATEGORIES = ("text_instead_of_tool", "malformed_call", "wrong_answer", "iteration_limit")


@pytest.fixture(scope="module")
def sim_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated matrix with failures of several categories: 96 runs over 16 cells."""
    return run_config(config(runs=6), tmp_path_factory.mktemp("scan") / "r.jsonl")


@pytest.mark.parametrize("kept", [0, 1, 3])
def test_a_report_from_the_scan_equals_the_report_from_every_record(sim_file: Path, kept: int) -> None:
    whole = build_report(load_results([sim_file]), max_failed_transcripts=kept)
    scanned = build_report(scan_results([sim_file], transcripts=kept), max_failed_transcripts=kept)
    assert sum(len(d.failed) for d in whole.drilldowns) > 0 or kept == 0
    assert scanned == whole


def test_the_scan_keeps_few_whole_records_and_rows_without_transcripts(sim_file: Path) -> None:
    results = scan_results([sim_file], transcripts=1)
    assert len(results.runs) == 96 and all(isinstance(r, RowView) for r in results.runs)
    assert not any(hasattr(r, name) for r in results.runs for name in ("messages", "calls", "check"))
    assert results.transcripts is not None and len(results.transcripts) == 16
    for key, kept in results.transcripts.items():
        categories = {r.failure for r in kept if not r.correct}
        # at most: the first passing run, the first run of each failure category, and 1 more failed run
        assert len(kept) <= 1 + len(categories) + 1, key
        assert all(type(r) is RunRecord and r.messages for r in kept)
    with pytest.raises(AttributeError, match="'RowView' object has no attribute"):
        transcript(results.runs[0])  # type: ignore[arg-type]  # a row has no transcript to show
    with pytest.raises(ValueError, match="2 failed transcripts per cell asked, 1 kept"):
        build_report(results, max_failed_transcripts=2)


def test_without_failed_transcripts_only_the_first_passing_run_stays_whole(sim_file: Path) -> None:
    kept = scan_results([sim_file], transcripts=0).transcripts
    assert kept is not None and all(len(runs) <= 1 and all(r.correct for r in runs) for runs in kept.values())
    assert any(kept.values())


def test_rows_keep_what_the_statistics_read(sim_file: Path) -> None:
    fields = (
        "run_id",
        "cell",
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
        "usage",
        "latency_s",
        "wall_s",
        "sampling",
        "error",
    )
    for whole, row in zip(load_results([sim_file]).runs, scan_results([sim_file]).runs, strict=True):
        assert {f: getattr(row, f) for f in fields} == {f: getattr(whole, f) for f in fields}
        assert row.counted == whole.counted
        assert row.prepared == [i for i in whole.interventions if i.action == "prepare"]


def test_the_gate_decides_the_same_on_scanned_rows(sim_file: Path, tmp_path: Path) -> None:
    worse = tmp_path / "worse.jsonl"
    lines = sim_file.read_text().splitlines(keepends=True)
    flipped = []
    for line in lines:  # the candidate loses every correct run of one strategy
        data = json.loads(line)
        if data["type"] == "run" and data["cell"]["strategy"] == "nudge" and data["completed"]:
            data.update(completed=False, correct=False, failure="wrong_answer", outcome="failed")
        flipped.append(json.dumps(data) + "\n")
    worse.write_text("".join(flipped))
    pooled = GateConfig(level="cell")  # 6 runs per scenario are too few for a verdict per scenario
    whole = compare(load_results([sim_file]), load_results([worse]), pooled)
    scanned = compare(scan_results([sim_file], transcripts=0), scan_results([worse], transcripts=0), pooled)
    assert scanned == whole and not scanned.passed


def test_a_malformed_run_line_still_names_its_line_and_field(sim_file: Path, tmp_path: Path) -> None:
    lines = sim_file.read_text().splitlines(keepends=True)
    lines[3] = re.sub(r'"correct":(true|false)', '"correct":"maybe"', lines[3])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    with pytest.raises(ResultsError, match=r"bad.jsonl:4: correct: "):
        scan_results([bad])


def test_a_cut_last_line_is_skipped_while_streaming(
    sim_file: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cut = tmp_path / "cut.jsonl"
    text = sim_file.read_text()
    cut.write_text(text[: text.rindex('{"type":"run"') + 40])  # the last run record, cut mid-line
    assert len(scan_results([cut]).runs) == 95
    assert "the last record is cut short (an interrupted write) and is skipped" in caplog.text


_run = st.tuples(st.booleans(), st.booleans(), st.sampled_from(_CATEGORIES))  # counted, correct, failure


@settings(max_examples=250, deadline=None)
@given(st.lists(_run, max_size=30), st.integers(0, 4), st.randoms(use_true_random=False))
def test_the_sample_holds_every_run_a_drilldown_picks(
    runs: list[tuple[bool, bool, str]], limit: int, rnd: random.Random
) -> None:
    """Whatever the order runs arrive in, picking from the kept records gives what picking from all gives."""
    made = []
    for index, (counted, correct, failure) in enumerate(runs):
        run = records.run(index=index, completed=correct, outcome=None if counted else "infra_error")
        made.append(run if run.correct or not counted else run.model_copy(update={"failure": failure}))
    rnd.shuffle(made)
    with tempfile.TemporaryDirectory() as tmp:
        path = records.write_results(Path(tmp) / "r.jsonl", made)
        kept = scan_results([path], transcripts=limit).transcripts
        every = load_results([path]).runs
    assert kept is not None
    sample = kept.get(every[0].cell.key(), []) if every else []
    assert pick_failed(sample, limit) == pick_failed(every, limit)
    assert pick_passing(sample) == pick_passing(every)
    assert len(sample) <= limit + len(FAILURE_CATEGORIES) + 1


# JSON-hostile text: quotes, backslashes, braces and the keys of a record's own fields
_hostile = st.lists(
    st.sampled_from(
        [
            '"',
            "\\",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "a",
            "é",
            "\n",
            ',"calls":[',
            '],"calls":[',
            "," + '"error":',  # a field boundary inside a string value
            ',"interventions":[',
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(run_id=_hostile, error=st.none() | _hostile, reason=_hostile, detail=_hostile, content=_hostile)
def test_a_run_head_is_the_whole_record_without_its_transcript(
    run_id: str, error: str | None, reason: str, detail: str, content: str
) -> None:
    base = records.run(
        error=error,
        messages=[Message(role="user", content=content)],
        interventions=[Intervention(strategy="s", action="retry", reason=reason, call_index=0)],
    )
    record = base.model_copy(
        update={"run_id": run_id, "check": [CheckItem(item=detail, passed=False, structural=True, detail=detail)]}
    )
    head = _RunHead.model_validate_json(record.model_dump_json())
    assert head.model_dump() == record.model_dump(exclude={"calls", "messages", "check"})


def test_a_line_laid_out_in_another_field_order_reads_the_same(tmp_path: Path) -> None:
    data = records.run(outcome="infra_error", error="HTTP 503").model_dump(mode="json")
    error = data.pop("error")
    reordered = json.dumps({"error": error, **data}, separators=(",", ":")) + "\n"
    path = tmp_path / "r.jsonl"
    lines = records.write_results(path, [records.run(index=1)]).read_text().splitlines(keepends=True)
    path.write_text("".join([lines[0], reordered, *lines[1:]]))
    assert [r.error for r in scan_results([path]).runs] == ["HTTP 503", None]


def test_broken_json_anywhere_in_a_run_line_is_an_error(tmp_path: Path) -> None:
    path = records.write_results(tmp_path / "r.jsonl", [records.run(index=i) for i in range(3)])
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace('"messages":[', '"messages":[{oops', 1)  # run 2: never shown (run 0 passes first)
    path.write_text("".join(lines))
    with pytest.raises(ResultsError, match=r"r.jsonl:4: not JSON"):
        scan_results([path])


def _full_passes(work: Callable[[], None]) -> int:
    """How many passes of the cyclic collector over its oldest generation `work` sets off."""
    passes: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            passes.append(1)

    gc.callbacks.append(seen)
    try:
        work()
    finally:
        gc.callbacks.remove(seen)
    return len(passes)


def _keep_containers(kept: list[object]) -> None:
    kept.extend([i] for i in range(50_000))  # long-lived containers: what sets off full passes


def test_rows_held_keeps_the_full_passes_off_while_the_command_works() -> None:
    # In a child process: whether 50,000 new containers set off a full pass depends on the heap
    # already there (CPython waits until the pending objects are a quarter of the long-lived ones),
    # and a whole test session's heap is large enough to hide them.
    code = """
import gc
from evalkit.results.scan import rows_held
from tests.results.test_scan import _full_passes, _keep_containers
gc.set_threshold(100, 2, 2)  # a caller's eager collector: full passes come often
assert _full_passes(lambda: _keep_containers([])) > 0, "the measure can see them"
with rows_held():
    assert _full_passes(lambda: _keep_containers([])) == 0
assert gc.get_threshold() == (100, 2, 2), "the caller's collector is back"
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=Path(__file__).parents[2]
    )
    assert done.returncode == 0, done.stderr


def test_rows_held_leaves_what_the_caller_froze_frozen() -> None:
    # a caller that froze its own objects; CPython 3.12 is one: it starts with the immortal tuples of
    # its static types in the permanent generation. A child process, so this one's collector is untouched.
    code = (
        "import gc; from evalkit.results.scan import rows_held\n"
        "gc.freeze(); before = gc.get_freeze_count()\n"
        "with rows_held(): pass\n"
        "assert gc.get_freeze_count() == before > 0, (gc.get_freeze_count(), before)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
