"""The self-contained HTML report: one file, inline CSS and SVG, no scripts, no network fetches.

A matrix cell links to its drill-down, which CSS opens as the link's `:target`: no JavaScript needed.

jinja2 runs with autoescape on and StrictUndefined. Transcripts are model output and therefore
untrusted; they reach the template as plain strings and are escaped like every other field. Only
the plots, which matplotlib wrote from numbers and labels it escapes itself, are marked safe.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from evalkit._version import __version__
from evalkit.report.data import ReportData
from evalkit.report.findings import Candidate
from evalkit.report.formats import (
    bfcl_notes,
    bfcl_value,
    calls_text,
    cost_text,
    interval,
    pct,
    pvalue,
    rate_colour,
    side_calls,
    signed,
    table_value,
)
from evalkit.report.plots import render_plots
from evalkit.report.style import failure_colour
from evalkit.results.escaping import terminal_text

__all__ = ["environment", "render_html", "stack_name"]


def breakable(text: str) -> Markup:
    """A snake_case label that may wrap after each underscore (a wide matrix's narrow headers)."""
    return Markup("_<wbr>").join(str(text).split("_"))  # join escapes each part


def stack_of(stacks: tuple[tuple[str, str], ...], label: str) -> str:
    """What a strategy label runs, for a matrix header's tooltip (several if configs disagree)."""
    return " | ".join(text for name, text in stacks if name == label) or label


def stack_name(candidate: Candidate) -> Markup:
    """A findings stack: its label, then its guards where the label does not say them."""
    if candidate.name == candidate.stack:
        return Markup("<b>{}</b>").format(candidate.stack)
    return Markup('<b>{}</b> <span class="guards">({})</span>').format(candidate.stack, candidate.guards)


def _visible(value: object) -> object:
    """Every printed string shows its control characters escaped (autoescape handles the markup);
    the markup evalkit made itself (the plots' SVG) is left as it is."""
    return terminal_text(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def environment() -> Environment:
    # autoescape for markup, `finalize` for control characters, StrictUndefined so a misspelt field
    # fails the report instead of printing nothing
    env = Environment(
        loader=PackageLoader("evalkit", "templates"),
        autoescape=True,
        finalize=_visible,
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
        stack_name=stack_name,
        breakable=breakable,
        bfcl_value=bfcl_value,
        bfcl_notes=bfcl_notes,
        cost_text=cost_text,
        calls_text=calls_text,
        pvalue=pvalue,
        signed=signed,
        side_calls=side_calls,
        failure_colour=failure_colour,
    )
    return env


def render_html(data: ReportData) -> str:
    # the one place markup is trusted: matplotlib wrote it, and escaped the labels it drew
    plots = {name: Markup(svg) for name, svg in render_plots(data).items()}
    template = environment().get_template("report.html.j2")
    return template.render(data=data, plots=plots, version=__version__)
