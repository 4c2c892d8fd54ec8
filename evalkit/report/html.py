"""The self-contained HTML report: one file, inline CSS and SVG, no scripts, no network fetches.

A matrix cell links to its drill-down, which CSS opens as the link's `:target`: no JavaScript needed.

jinja2 runs with autoescape on and StrictUndefined. Transcripts are model output and therefore
untrusted; they reach the template as plain strings and are escaped like every other field. Only
the plots, which matplotlib wrote from numbers and labels it escapes itself, are marked safe.
"""

from __future__ import annotations

import math

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from evalkit import __version__
from evalkit.report.bfcl_table import BfclEntry
from evalkit.report.cells import Cost, Rate
from evalkit.report.data import ReportData
from evalkit.report.plots import render_plots
from evalkit.report.style import failure_colour

__all__ = ["environment", "render_html"]


def pct(value: float | None, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{value * 100:.{digits}f}%"


def interval(rate: Rate | None) -> str:
    return "" if rate is None else f"[{rate.low * 100:.0f}–{rate.high * 100:.0f}]"


def rate_colour(rate: Rate | None) -> str:
    """Red (0%) through yellow to green (100%), light enough for dark text."""
    if rate is None:
        return "#eeeeee"
    return f"hsl({rate.value * 120:.0f}, 70%, 82%)"


def table_value(value: float | Rate | None, published: bool = True) -> str:
    """A cell of the published-beside-measured table: a typed-in rate, or a measured one with its interval."""
    if value is None:
        return "not measured" if published else "no counted run"
    if isinstance(value, Rate):
        return f"{pct(value.value)} {interval(value)} {value.x}/{value.n}"
    return pct(value)


def _share(x: int, n: int) -> str:
    return f"{pct(x / n)} ({x}/{n})" if n else "no counted run"


def bfcl_value(entry: BfclEntry | None, checker: str, missing: str | None = None) -> str:
    """A cell of the BFCL score table: the accuracy by `checker` ("evalkit" or "bfcl") of one category."""
    if entry is None:
        return "–"
    if checker == "evalkit":
        return _share(entry.evalkit_correct, entry.evalkit_counted)
    if entry.bfcl_correct is None or entry.bfcl_judged is None:
        return missing or "not judged"
    return _share(entry.bfcl_correct, entry.bfcl_judged)


def bfcl_notes(entry: BfclEntry | None) -> str:
    """What a BFCL score cell's accuracies leave out: verdicts that differ, runs BFCL could not judge."""
    if entry is None:
        return ""
    notes = [f"{entry.disagree} disagree"] if entry.disagree else []
    if entry.not_judged:
        reasons = ", ".join(f"{n} {why}" for why, n in entry.not_judged)
        notes.append(f"{entry.not_judged_total} not judged by BFCL ({reasons})")
    return "; ".join(notes)


def cost_text(cost: Cost | None) -> str:
    if cost is None:
        return ""
    return (
        f"; latency median {cost.latency_median_s:.1f}s, p90 {cost.latency_p90_s:.1f}s; "
        f"{cost.tokens_mean:.0f} tokens, {cost.model_calls_mean:.1f} model calls "
        f"({cost.wasted_calls_mean:.1f} wasted) per run"
    )


def pvalue(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def signed(value: float) -> str:
    points = round(value * 100)
    return f"{points:+d}" if points else "0"  # never "-0"


def breakable(text: str) -> Markup:
    """A snake_case label that may wrap after each underscore (a wide matrix's narrow headers)."""
    return Markup("_<wbr>").join(str(text).split("_"))  # join escapes each part


def stack_of(stacks: tuple[tuple[str, str], ...], label: str) -> str:
    """What a strategy label runs, for a matrix header's tooltip (several if configs disagree)."""
    return " | ".join(text for name, text in stacks if name == label) or label


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("evalkit", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        pct=pct,
        interval=interval,
        rate_colour=rate_colour,
        table_value=table_value,
        stack_of=stack_of,
        breakable=breakable,
        bfcl_value=bfcl_value,
        bfcl_notes=bfcl_notes,
        cost_text=cost_text,
        pvalue=pvalue,
        signed=signed,
        failure_colour=failure_colour,
    )
    return env


def render_html(data: ReportData) -> str:
    plots = {name: Markup(svg) for name, svg in render_plots(data).items()}
    template = environment().get_template("report.html.j2")
    return template.render(data=data, plots=plots, version=__version__)
