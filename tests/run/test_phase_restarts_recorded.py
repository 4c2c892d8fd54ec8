"""A guard proxy that crashes mid-run (issue 38, item 4), with real processes: tests/stub_proxy.py exits
after every 5 requests; evalkit starts it again (three times a chain) and each run that held the chain
when it exited records it in `phase_restarts`; `run`'s summary and the report count them."""

from __future__ import annotations

from pathlib import Path

from evalkit.report.data import build_report
from evalkit.report.terminal import summary_table
from evalkit.results.records import PhaseRestart
from evalkit.results.scan import scan_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.run.test_server_phases import SIM_PHASE, stub_phase, write_config


def test_each_exit_is_in_the_record_of_the_run_it_touched_and_counted(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, SIM_PHASE + stub_phase("--crash-after", "5"), runs=6, concurrency=1))
    results = scan_results([run_config(config, tmp_path / "a.jsonl")])
    exits = [(r.run_id, p) for r in results.runs for p in r.phase_restarts]
    # three lifetimes ended and were followed by a start; the fourth ended for good, recorded once
    assert [p for _, p in exits] == [PhaseRestart(phase="stub", exit_code=3, started=True)] * 3 + [
        PhaseRestart(phase="stub", exit_code=3, started=False)
    ]
    assert len({run_id for run_id, _ in exits}) == 4
    touched = {run_id for run_id, _ in exits}
    assert all(not r.phase_restarts for r in results.runs if r.run_id not in touched)
    summary = summary_table(results)
    assert "server phases that exited mid-run: 4 times in 4 runs (chain: stub 4 times, started again 3)" in summary
    (line,) = build_report(results, include_power=False).phase_restarts
    assert (line.backend, line.phase, line.exits, line.started_again, line.runs) == ("chain", "stub", 4, 3, 4)
