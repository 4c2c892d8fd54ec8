"""Plots for the HTML report, drawn with matplotlib's object API (no pyplot, no GUI backend) and
returned as inline SVG text.

Each plot's element ids carry the plot's name (and its own `svg.hashsalt`) so the ids of several
inline SVGs never collide in one page, and text stays text (`svg.fonttype: none`) to keep the file small.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from evalkit.report.cells import CellStats
from evalkit.report.data import Column, ReportData, Row
from evalkit.report.forked import draw
from evalkit.report.style import FAILURE_COLOURS, failure_colour
from evalkit.results.escaping import terminal_text

__all__ = [
    "PLOTS",
    "failure_breakdown",
    "forest_plots",
    "heatmap",
    "measured_latency",
    "plot_text",
    "render_plots",
    "retries_distribution",
    "to_svg",
    "tradeoff",
]

_GROUP_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
_RETRY_BUCKETS = ("0", "1", "2", "3", "4+")
_SVG_ID = re.compile(r'(\sid=")')
_SVG_REF = re.compile(r'(url\(#|href="#)')
_PAD_INCHES = 0.1  # around the tight box: savefig's default `pad_inches`
_SVG_VIEWPORT = re.compile(r'(<svg[^>]*?) width="[^"]*" height="[^"]*" viewBox="[^"]*"([^>]*)>')


def to_svg(fig: Figure, name: str) -> str:
    """The figure as SVG text, cropped as `bbox_inches="tight"` would crop it but drawn once: that option
    draws every figure twice (a dry run to measure, then the real one), a quarter of a report's plot time.
    Here the box is measured inside the one draw, with its renderer, and the SVG's viewport is set to it;
    a background rectangle covers what lies outside the figure (the labels left of the axes, a legend
    right of them), which matplotlib draws but its figure patch does not cover."""
    buf = io.StringIO()
    boxes: list[Bbox] = []
    hook = fig.canvas.mpl_connect("draw_event", lambda event: boxes.append(fig.get_tightbbox(event.renderer)))
    try:
        # no date and a fixed salt: the same data draws the same bytes, so a committed report regenerates unchanged
        with matplotlib.rc_context({"svg.hashsalt": f"evalkit-{name}", "svg.fonttype": "none"}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        fig.canvas.mpl_disconnect(hook)
    text = _cropped(buf.getvalue(), fig, boxes[-1].padded(_PAD_INCHES))
    # matplotlib numbers its element ids per figure (figure_1, patch_1, ...), and the salt only reaches
    # the hashed ones: prefix every id and every in-document reference, so that no id repeats in the page
    svg = _SVG_ID.sub(lambda m: f"{m.group(1)}{name}-", text[text.index("<svg") :])
    return _SVG_REF.sub(lambda m: f"{m.group(1)}{name}-", svg)


def _cropped(svg: str, fig: Figure, box: Bbox) -> str:
    x, y = box.x0 * 72, (fig.get_figheight() - box.y1) * 72  # inches to points, and SVG's y runs down
    width, height = box.width * 72, box.height * 72
    viewport = f'width="{width:.6g}pt" height="{height:.6g}pt" viewBox="{x:.6g} {y:.6g} {width:.6g} {height:.6g}"'
    background = (
        f'<rect x="{x:.6g}" y="{y:.6g}" width="{width:.6g}" height="{height:.6g}" '
        f'fill="{to_hex(fig.get_facecolor())}"/>'
    )
    out, found = _SVG_VIEWPORT.subn(lambda m: f"{m.group(1)} {viewport}{m.group(2)}>{background}", svg, count=1)
    if not found:
        raise ValueError("matplotlib's SVG has no width, height and viewBox where expected")
    return out


def plot_text(text: str) -> str:
    """A name (from a results file: data) as a plot shows it: control characters escaped (matplotlib
    has no glyph for them) and `$` literal (`$...$` would be parsed as TeX, and bad TeX raises)."""
    return terminal_text(text).replace("$", r"\$")


def _label(column: Column) -> str:
    """A column's label in a plot, marked when its runs are simulated (never a global title mark:
    most reports mix real and simulated columns)."""
    return plot_text(f"{column.label} [SIM]" if column.simulated else column.label)


def _overall(data: ReportData) -> list[tuple[Column, CellStats]]:
    overall = data.rows[0]
    pairs = [(c, data.cell(overall, c)) for c in data.columns]
    return [(c, s) for c, s in pairs if s is not None and s.correct is not None]


def _group_colour(data: ReportData) -> Callable[[Column], str]:
    # one colour per backend · model, in column order: every plot colours a model alike
    groups = list(dict.fromkeys(c.group for c in data.columns))
    return lambda column: _GROUP_COLOURS[groups.index(column.group) % len(_GROUP_COLOURS)]


def _figure(rows: int, width: float = 7.5) -> tuple[Figure, Axes]:
    # a figure's height grows with its rows, so a label never overlaps the next one
    fig = Figure(figsize=(width, 0.9 + 0.32 * max(rows, 1)))
    return fig, fig.add_subplot()


def _forest(data: ReportData, row: Row, name: str) -> str:
    items = [(c, s) for c in data.columns if (s := data.cell(row, c)) is not None and s.correct is not None]
    fig, ax = _figure(len(items))
    colour = _group_colour(data)
    for y, (column, stats) in enumerate(items):
        rate = stats.correct
        assert rate is not None
        ax.errorbar(
            rate.value,
            y,
            xerr=[[rate.value - rate.low], [rate.high - rate.value]],
            fmt="o",
            color=colour(column),
            capsize=3,
        )
    ax.set_yticks(range(len(items)), [_label(c) for c, _ in items])
    # the first column on top, as the matrix lists it
    ax.invert_yaxis()
    # a little past 0 and 1, so a marker at either end is not cut in half
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"correct rate ({data.confidence:.0%} {data.interval_method} interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Correct rate: {plot_text(row.label)}")
    return to_svg(fig, name)


def forest_plots(data: ReportData) -> dict[str, Callable[[], str]]:
    """Correct rate with its interval per column, one plot per family (pooling greetings with
    workflows into one number would hide which family a guard helps); each plot to be drawn."""
    families = [r for r in data.rows if r.kind == "family"]
    return {f"forest-{i}": partial(_forest, data, row, f"forest-{i}") for i, row in enumerate(families)}


def tradeoff(data: ReportData) -> str:
    """Correct rate (all scenarios) against mean latency per run, per stack and model: what a
    guard's retries cost in time, the trade-off a deployer weighs. Simulated columns are left out:
    the simulated backend's latency is not a measurement (the page says so)."""
    items = [(c, s) for c, s in _overall(data) if s.cost is not None and not c.simulated]
    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot()
    colour = _group_colour(data)
    # colour says the model, the marker the strategy: both readable without the legend's order
    markers = "osD^v<>Pp*hX"
    strategies = list(dict.fromkeys(c.strategy for c, _ in items))
    for column, stats in items:
        rate, cost = stats.correct, stats.cost
        assert rate is not None and cost is not None
        ax.errorbar(
            cost.latency_mean_s,
            rate.value,
            yerr=[[rate.value - rate.low], [rate.high - rate.value]],
            fmt=markers[strategies.index(column.strategy) % len(markers)],
            color=colour(column),
            capsize=2,
            alpha=0.85,
            label=_label(column),
        )
    ax.set_xlabel("mean latency per run (s)")
    ax.set_ylabel("correct rate, all scenarios")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax.set_title("Correct rate against latency, per stack and model")
    return to_svg(fig, "tradeoff")


def heatmap(data: ReportData) -> str:
    """Correct rate per scenario (rows) and column, annotated with the percentage."""
    rows = [r for r in data.rows if r.kind == "scenario"]
    values = np.full((len(rows), len(data.columns)), np.nan)
    for i, row in enumerate(rows):
        for j, column in enumerate(data.columns):
            stats = data.cell(row, column)
            if stats is not None and stats.correct is not None:
                values[i, j] = stats.correct.value
    fig = Figure(figsize=(1.6 + 0.75 * len(data.columns), 1.8 + 0.3 * len(rows)))
    ax = fig.add_subplot()
    # a cell with no counted run is left blank, not drawn as 0%
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        if not np.isnan(value):
            ax.text(
                j,
                i,
                f"{value:.0%}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if value < 0.2 or value > 0.85 else "black",
            )  # readable on the dark ends
    several = len({c.group for c in data.columns}) > 1  # then strategy and mode alone repeat across models
    ax.set_xticks(
        range(len(data.columns)),
        [
            plot_text(f"{c.strategy}\n{c.group if several else c.mode}{' [SIM]' if c.simulated else ''}")
            for c in data.columns
        ],
        rotation=45,
        ha="right",
        fontsize=8,
    )
    ax.set_yticks(range(len(rows)), [plot_text(f"{r.family} / {r.scenario}") for r in rows], fontsize=8)
    fig.colorbar(image, ax=ax, label="correct rate", fraction=0.03)
    ax.set_title("Correct rate per scenario")
    return to_svg(fig, "heatmap")


def _bucketed(hist: tuple[int, ...]) -> list[int]:
    # 0 to 3 retries each, then 4 and more together: a long tail of single runs would be unreadable bars
    return [*hist[:4], *([0] * (4 - len(hist[:4]))), sum(hist[4:])]


def _stacked(ax: Axes, labels: list[str], parts: list[str], shares: np.ndarray, colours: Sequence[Any]) -> None:
    left = np.zeros(len(labels))
    for k, part in enumerate(parts):
        ax.barh(range(len(labels)), shares[:, k], left=left, color=colours[k], label=part)
        left += shares[:, k]
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    # beside the bars: a legend below them covered the x-axis label (its offset is a share of the axes'
    # height, which changes with the number of columns)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def retries_distribution(data: ReportData) -> str:
    """Share of counted runs with 0, 1, 2, 3 and 4+ retries, per column."""
    items = _overall(data)
    # `max(…, 1)`: a column without counted runs draws an empty bar rather than dividing by zero
    shares = np.array([np.array(_bucketed(s.retries_hist)) / max(s.counted, 1) for _, s in items])
    fig, ax = _figure(len(items))
    blues = list(matplotlib.colormaps["Blues"](np.linspace(0.2, 0.95, len(_RETRY_BUCKETS))))
    _stacked(ax, [_label(c) for c, _ in items], list(_RETRY_BUCKETS), shares.reshape(len(items), 5), blues)
    ax.set_xlabel("share of runs by number of retries")
    ax.set_title("Retries per run")
    return to_svg(fig, "retries")


def failure_breakdown(data: ReportData) -> str:
    """Failure categories as a share of counted runs, per column (the bar's gap is correct runs)."""
    items = _overall(data)
    present = {name for _, s in items for name, _ in s.failures}
    # the fixed order and colours of style.FAILURE_COLOURS, so a category looks the same in every report
    categories = [c for c in FAILURE_COLOURS if c in present] + sorted(present - set(FAILURE_COLOURS))
    shares = np.array(
        [[dict(s.failures).get(name, 0) / max(s.counted, 1) for name in categories] for _, s in items]
    ).reshape(len(items), len(categories))
    fig, ax = _figure(len(items))
    if categories:
        _stacked(ax, [_label(c) for c, _ in items], categories, shares, [failure_colour(c) for c in categories])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of runs that were not correct, by failure category")
    ax.set_title("Failure categories by strategy")
    return to_svg(fig, "failures")


PLOTS: dict[str, Callable[[ReportData], str]] = {
    "heatmap": heatmap,
    "tradeoff": tradeoff,
    "retries": retries_distribution,
    "failures": failure_breakdown,
}


def render_plots(data: ReportData, *, fork: bool | None = None) -> dict[str, str]:
    """Every plot as SVG text (the per-family forest plots first), or an empty dict when there is
    nothing to plot. `fork`: see `evalkit.report.forked.draw`."""
    if not _overall(data):
        return {}
    # the latency plot only where some latency was measured (see `tradeoff`)
    plots = {name: partial(plot, data) for name, plot in PLOTS.items() if name != "tradeoff" or measured_latency(data)}
    return draw(forest_plots(data) | plots, fork=fork)


def measured_latency(data: ReportData) -> bool:
    """Some column's latency was measured: only those are drawn against latency."""
    return any(not c.simulated for c, _ in _overall(data))
