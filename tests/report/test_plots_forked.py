"""Plots drawn on two cores (`evalkit.report.forked`): the same SVGs as drawn in one process, in the
same order, and the parent draws whatever a failed child did not send."""

from __future__ import annotations

import os
import threading

from evalkit.report import build_report
from evalkit.report.forked import can_fork, draw
from evalkit.report.plots import render_plots
from tests.report import records


def test_forked_plots_are_the_plots_drawn_in_one_process() -> None:
    runs = [*records.cell_runs(7, 10, scenario="s1", family="f1"),
            *records.cell_runs(3, 10, scenario="s2", family="f2"),
            *records.cell_runs(9, 10, scenario="s1", family="f1", strategy="retry_nudge"),
            *records.cell_runs(2, 10, scenario="s2", family="f2", strategy="retry_nudge")]
    data = build_report(records.results(runs), include_power=False)
    forked = render_plots(data, fork=True)
    assert list(forked) == ["forest-0", "forest-1", "heatmap", "tradeoff", "retries", "failures"]
    assert forked == render_plots(data, fork=False)


def test_what_a_failed_child_leaves_undrawn_the_parent_draws() -> None:
    parent = os.getpid()

    def only_in_the_parent() -> str:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return "drawn by the parent"

    jobs = {"a": lambda: "a", "b": only_in_the_parent, "c": lambda: "c", "d": lambda: "d"}  # the child: b, d
    assert draw(jobs, fork=True) == {"a": "a", "b": "drawn by the parent", "c": "c", "d": "d"}
    assert list(draw(jobs, fork=True)) == ["a", "b", "c", "d"]


def test_no_fork_while_another_thread_runs() -> None:
    """A lock another thread holds at the fork would stay held in the child."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not can_fork()
        assert draw({"a": lambda: str(os.getpid()), "b": lambda: str(os.getpid())}) == {
            "a": str(os.getpid()), "b": str(os.getpid())}
    finally:
        release.set()
        other.join()
