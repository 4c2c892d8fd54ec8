"""What `evalkit run` prints: the summary (full family names, N, correct with its interval,
completed, 100 columns) and the progress bar (whole plan on resume, pace, ETA, infra errors)."""

from __future__ import annotations

import io
from pathlib import Path

from evalkit.cli.progress import ProgressBar
from evalkit.report.terminal import WIDTH, summary_table
from evalkit.results.runs import Results
from evalkit.results.writer import ResultsWriter
from evalkit.stats.proportions import wilson
from tests.report import records

LONG_FAMILY = "a_family_name_much_longer_than_fourteen_characters"


def test_summary_names_families_in_full_with_n_correct_interval_and_completed() -> None:
    runs = [
        *records.cell_runs(
            7,
            10,
            family=LONG_FAMILY,
            backend="a-backend-with-a-long-label",
            model="m",
            strategy="respond_tool+retry_nudge+grammar+rescue_parsing",
        ),
        *records.cell_runs(3, 4, family="short", strategy="trust_text"),
        records.run(family="short", strategy="trust_text", index=9, outcome="infra_error"),
    ]
    # correct differs from completed in one run: the summary must lead with correct
    runs[0] = runs[0].model_copy(update={"correct": False, "failure": "wrong_answer"})
    text = summary_table(records.results(runs))
    lines = text.splitlines()
    assert LONG_FAMILY in lines and "short" in lines
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    ci = wilson(6, 10)
    assert f"  6/10   60% [{ci.low * 100:3.0f}–{ci.high * 100:3.0f}]  completed  70%  r0.0" in text
    # the long stack label does not fit beside the numbers: it gets a line of its own, not a cut
    label = "a-backend-with-a-long-label · native · respond_tool+retry_nudge+grammar+rescue_parsing"
    assert f"  {label}" in lines
    assert "  3/4    75%" in text and "+1 infra" in text
    assert text.endswith("not counted: 1 infra_error, 0 unsupported runs")


def test_summary_marks_simulated_lines() -> None:
    text = summary_table(
        records.results([*records.cell_runs(2, 2, simulated=True), *records.cell_runs(1, 2, backend="real", model="r")])
    )
    assert "sim · native · trust_text [SIM]" in text and "real · native · trust_text  " in text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_bar_counts_the_whole_plan_paces_and_counts_infra_errors(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = ResultsWriter(path)
    writer.write(records.header())
    writer.write(records.run(index=0, outcome="infra_error", backend="old"))  # before this session: ignored
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(True, planned=100, results=path, stream=stream, clock=clock)
    # a resumed run: 60 runs were done before, 40 are pending
    clock.now += 30
    writer.write(records.run(index=1, outcome="infra_error", backend="smollm2"))
    writer.write(records.run(index=2, backend="smollm2"))
    bar(2, 40)
    line = stream.getvalue().split("\r")[-1]
    assert "62/100 runs (60 before resume)" in line
    assert "15.0 s/run" in line and "ETA 0:09:30" in line  # 38 runs left at 15 s each
    assert "infra errors: smollm2 1" in line and "old" not in line
    clock.now += 1
    for i in range(3, 41):
        writer.write(records.run(index=i, outcome="infra_error" if i % 10 == 0 else "terminal_tool", backend="g"))
    bar(40, 40)
    last = stream.getvalue().split("\r")[-1]
    assert "100/100 runs" in last and "ETA 0:00:00" in last and last.endswith("\n")
    assert "infra errors: g 4, smollm2 1" in last  # runs 10, 20, 30 and 40
    writer.close()


def test_progress_bar_shows_runs_per_second_when_fast_and_nothing_when_disabled() -> None:
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(True, planned=10, stream=stream, clock=clock)
    clock.now += 0.5
    bar(5, 10)
    assert "5/10 runs  10.0 runs/s  ETA 0:00:00" in stream.getvalue()
    quiet = io.StringIO()
    ProgressBar(False, planned=10, stream=quiet)(5, 10)
    assert quiet.getvalue() == ""


def test_lines_follow_the_configs_order_not_the_order_runs_finished() -> None:
    config = {"backends": [{"label": "first"}, {"label": "second"}], "modes": ["native"], "strategies": {"s": []}}
    header = records.header().model_copy(update={"config": config})
    runs = [  # concurrent backends: the second one's runs happened to land first
        *records.cell_runs(1, 2, backend="second", strategy="s"),
        *records.cell_runs(2, 2, backend="first", strategy="s"),
    ]
    table = summary_table(Results(headers=[header], runs=runs, paths=["mem.jsonl"]))
    assert table.index("first · native · s") < table.index("second · native · s")
