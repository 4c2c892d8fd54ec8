"""Drawing the plots: on two cores (`evalkit.report.forked`) the same SVGs as in one process, in the
same order, with the parent drawing whatever a failed child did not send; each plot drawn once and
cropped as matplotlib's `bbox_inches="tight"` crops."""

from __future__ import annotations

import io
import os
import re
import threading
from xml.etree import ElementTree

import pytest
from matplotlib.figure import Figure

from evalkit.report.data import build_report
from evalkit.report.forked import can_fork, draw
from evalkit.report.plots import render_plots, to_svg
from tests.report import records


def test_forked_plots_are_the_plots_drawn_in_one_process() -> None:
    runs = [
        *records.cell_runs(7, 10, scenario="s1", family="f1"),
        *records.cell_runs(3, 10, scenario="s2", family="f2"),
        *records.cell_runs(9, 10, scenario="s1", family="f1", strategy="retry_nudge"),
        *records.cell_runs(2, 10, scenario="s2", family="f2", strategy="retry_nudge"),
    ]
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
            "a": str(os.getpid()),
            "b": str(os.getpid()),
        }
    finally:
        release.set()
        other.join()


def test_a_plot_drawn_once_is_cropped_to_matplotlibs_tight_box() -> None:
    """`to_svg` measures the box inside its one draw; `bbox_inches="tight"` measures it in a dry run."""
    fig = Figure(figsize=(5, 2))
    ax = fig.add_subplot()
    ax.barh([0, 1], [0.3, 0.6], label="a legend entry right of the axes")
    ax.set_yticks([0, 1], ["a label far longer than the figure's left margin", "short"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    tight = io.StringIO()
    fig.savefig(tight, format="svg", bbox_inches="tight")
    ours = to_svg(fig, "t")
    size = re.compile(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt" viewBox="(-?[\d.]+) (-?[\d.]+) ')
    expected, got = size.search(tight.getvalue()), size.search(ours)
    assert expected is not None and got is not None
    assert [float(v) for v in got.groups()[:2]] == pytest.approx([float(v) for v in expected.groups()[:2]], abs=1e-3)
    assert float(got.group(3)) < 0  # the long label lies left of the figure: the viewport reaches it
    root = ElementTree.fromstring(ours)
    background = root.find("{http://www.w3.org/2000/svg}rect")
    assert background is not None and background.get("fill") == "#ffffff"
