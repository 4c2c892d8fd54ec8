"""Reports from results files: report data (pure) and HTML, markdown and JSON renderers.

    data = build_report(load_results(paths))
    write_report(data, Path("reports/default.html"), "html")

`write_report` writes through a temporary file and renames it, so a failed render never leaves a
half-written report behind.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.results.output_file import write_output

if TYPE_CHECKING:
    from evalkit.report.data import ReportData, build_report

__all__ = [
    "FORMATS",
    "Renderer",
    "ReportData",
    "ReportFormat",
    "build_report",
    "format_for_suffix",
    "render",
    "write_report",
]

ReportFormat = str  # a key of FORMATS


@dataclass(frozen=True)
class Renderer:
    """A report format: the function that renders it (imported on first use, so that `run` and the
    terminal summary, `evalkit.report.terminal`, load neither jinja2 nor matplotlib) and the file
    suffix it is written with."""

    module: str
    function: str
    suffix: str


# The one list of report formats (`report --format`, `run --report FILE.suffix`).
FORMATS: dict[ReportFormat, Renderer] = {
    "html": Renderer("evalkit.report.html", "render_html", ".html"),
    "markdown": Renderer("evalkit.report.markdown", "render_markdown", ".md"),
    "json": Renderer("evalkit.report.jsonfmt", "render_json", ".json"),
}


def format_for_suffix(path: Path) -> ReportFormat | None:
    """The format a file name asks for by its suffix (`.md`: markdown), if any."""
    return next((name for name, r in FORMATS.items() if r.suffix == path.suffix.lower()), None)


def __getattr__(name: str) -> Any:
    if name in ("ReportData", "build_report"):
        return getattr(importlib.import_module("evalkit.report.data"), name)
    raise AttributeError(f"module 'evalkit.report' has no attribute {name!r}")


def render(data: ReportData, fmt: ReportFormat = "html") -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    renderer = FORMATS[fmt]
    # imported now, not at the top: `run` prints its summary without jinja2 or matplotlib
    text: str = getattr(importlib.import_module(renderer.module), renderer.function)(data)
    return text


def write_report(data: ReportData, output: Path, fmt: ReportFormat = "html") -> Path:
    """Render and write `output`; a file that cannot be written is an OutputError."""
    return write_output(output, render(data, fmt), option="report")
