"""The calibration page of `evalkit sim check --report FILE.html`: predicted against observed, per cell.

One point per real cell: x is the simulation's predicted share of correct runs, y the real share
with its 95% Wilson interval; a grey band at x spans the simulation's 95% prediction interval of the
real share at the cell's n (it holds the real runs' own noise, so a calibrated profile puts about 95%
of the points on their band, not on the diagonal). Cells outside their band are drawn red and
named. The page is one self-contained file like the HTML report: inline CSS and SVG, jinja2 with
autoescape, so cell names from results files (untrusted input) are escaped; only the SVG, which
matplotlib wrote and escaped itself, is marked safe. Everything predicted is labelled SIMULATED.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from evalkit._version import __version__
from evalkit.report.html import environment
from evalkit.report.plots import plot_text, to_svg
from evalkit.simfit.check import CellFit, CheckResult
from evalkit.stats.proportions import Interval, wilson

__all__ = ["CalibrationPoint", "calibration_svg", "render_calibration"]

_INSIDE, _OUTSIDE, _BAND = "#1f77b4", "#d62728", "#c9ced6"


@dataclass(frozen=True)
class CalibrationPoint:
    """A cell as the page shows it: the fit, and the real share's Wilson interval."""

    cell: CellFit
    observed: float
    wilson: Interval

    @property
    def name(self) -> str:
        c = self.cell
        return f"{c.source}: {c.mode}/{c.stack}/{c.scenario}"


def points(cells: list[CellFit]) -> list[CalibrationPoint]:
    return [CalibrationPoint(c, c.correct / c.n, wilson(c.correct, c.n)) for c in cells]


def calibration_svg(shown: list[CalibrationPoint], headline: str) -> str:
    """The plot as inline SVG. One marker per cell (one `errorbar` series each for inside and outside,
    no caps), so the SVG's markers count the cells."""
    from matplotlib.figure import Figure  # lazily: the CLI's start-up never pays for matplotlib

    fig = Figure(figsize=(6.4, 6.0))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="#888888", linestyle="--", linewidth=1, label="predicted = observed")
    ax.vlines(
        [p.cell.predicted for p in shown],
        [p.cell.low for p in shown],
        [p.cell.high for p in shown],
        color=_BAND,
        linewidth=7,
        label="95% prediction interval (SIMULATED)",
    )
    for inside, colour, label in ((True, _INSIDE, "real cell, inside"), (False, _OUTSIDE, "real cell, outside")):
        group = [p for p in shown if p.cell.inside == inside]
        if not group:
            continue
        ax.errorbar(
            [p.cell.predicted for p in group],
            [p.observed for p in group],
            yerr=[[p.observed - p.wilson.low for p in group], [p.wilson.high - p.observed for p in group]],
            fmt="o",
            color=colour,
            markersize=5,
            elinewidth=1,
            capsize=0,  # caps are markers too: without them the SVG's markers are the cells
            label=f"{label} (95% Wilson)",
        )
    named: dict[float, int] = {}
    for p in shown:
        if not p.cell.inside:  # named in the plot; the table below names every cell
            level = round(p.observed, 1)
            named[level] = named.get(level, -1) + 1  # names at one height are stacked, not overprinted
            right = p.cell.predicted > 0.5  # written towards the middle, so no name leaves the axes
            ax.annotate(
                plot_text(f"{p.cell.stack}/{p.cell.scenario}"),
                (p.cell.predicted, p.observed),
                xytext=(-6 if right else 6, 4 + 9 * named[level]),
                ha="right" if right else "left",
                textcoords="offset points",
                fontsize=7,
                color=_OUTSIDE,
            )
    # a little past 0 and 1 so a point at either end is whole; equal axes, so the diagonal is at 45°
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    ax.set_aspect("equal")
    ax.set_xlabel("predicted share of correct runs (SIMULATED)")
    ax.set_ylabel("observed share of correct runs (real)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    ax.set_title(plot_text(headline), fontsize=10)
    return to_svg(fig, "calibration")


def render_calibration(result: CheckResult, label: str, checked: list[str]) -> str:
    """The page. `label` is the profile's (`SimProfile.label()`), `checked` the results files' names:
    no machine path reaches the page."""
    shown = points(result.cells)
    inside = sum(p.cell.inside for p in shown)
    headline = f"{inside} of {len(shown)} cells inside the 95% prediction interval ({result.share_inside:.0%})"
    svg = Markup(calibration_svg(shown, headline)) if shown else None  # matplotlib escaped its text itself
    template = environment().get_template("calibration.html.j2")
    return template.render(
        points=shown, result=result, label=label, checked=checked, headline=headline, svg=svg, version=__version__
    )
