"""A guard that crashes is a finding (issue 38, item 4): a server phase that exited mid-run and was
started again is recorded in the run it touched (`phase_restarts`, typed), read back through the
columnar scan, and counted in `run`'s summary and in the HTML and markdown reports."""

from __future__ import annotations

from pathlib import Path

from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import summary_table
from evalkit.results.records import PhaseRestart
from evalkit.results.scan import scan_results
from tests.report.records import run, write_results


def _runs() -> list:  # type: ignore[type-arg]
    crashed = run(backend="forge-proxy", index=1).model_copy(
        update={"phase_restarts": [PhaseRestart(phase="forge[1]", exit_code=-9, started=True)]}
    )
    twice = run(backend="forge-proxy", index=2, completed=False).model_copy(
        update={
            "phase_restarts": [
                PhaseRestart(phase="forge[0]", exit_code=-9, started=True),
                PhaseRestart(phase="forge[0]", exit_code=1, started=False),
            ]
        }
    )
    return [run(backend="forge-proxy", index=0), crashed, twice, run(backend="direct", index=0)]


def test_a_restart_is_read_back_from_the_file_by_the_scan(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", _runs())
    scanned = scan_results([path])
    restarts = {r.index: r.phase_restarts for r in scanned.runs if r.cell.backend == "forge-proxy"}
    assert restarts[0] == [] and [p.phase for p in restarts[2]] == ["forge[0]", "forge[0]"]
    assert restarts[1] == [PhaseRestart(phase="forge[1]", exit_code=-9, started=True)]


def test_the_summary_counts_them(tmp_path: Path) -> None:
    summary = summary_table(scan_results([write_results(tmp_path / "r.jsonl", _runs())]))
    assert (
        "server phases that exited mid-run: 3 times in 2 runs (forge-proxy: forge 3 times, started again 2); "
        "see each run's phase_restarts"
    ) in summary
    plain = summary_table(scan_results([write_results(tmp_path / "p.jsonl", [run()])]))
    assert "exited mid-run" not in plain


def test_both_reports_show_them(tmp_path: Path) -> None:
    data = build_report(scan_results([write_results(tmp_path / "r.jsonl", _runs())]), include_power=False)
    ((restarts),) = data.phase_restarts
    assert (restarts.backend, restarts.phase, restarts.exits, restarts.started_again, restarts.runs) == (
        "forge-proxy",
        "forge",
        3,
        2,
        2,
    )
    html = render_html(data)
    assert 'id="phase-restarts"' in html
    assert "forge-proxy: server phase <b>forge</b> exited mid-run 3 times in 2 runs (started again 2 times)" in html
    assert "server phase forge exited mid-run 3 times in 2 runs (started again 2 times)" in render_markdown(data)
    quiet = build_report(scan_results([write_results(tmp_path / "q.jsonl", [run()])]), include_power=False)
    assert quiet.phase_restarts == () and 'id="phase-restarts"' not in render_html(quiet)
