"""Reports from results files: report data (pure) and HTML, markdown and JSON renderers.

    data = build_report(load_results(paths))
    write_report(data, Path("reports/default.html"), "html")

`write_report` writes through a temporary file and renames it, so a failed render never leaves a
half-written report behind.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit.results.output_file import write_output

if TYPE_CHECKING:
    from evalkit.report.data import ReportData, build_report

__all__ = ["FORMATS", "ReportData", "ReportFormat", "build_report", "render", "write_report"]

ReportFormat = Literal["html", "markdown", "json"]
# format -> (module, renderer): imported on first use, so that `run` and the terminal summary
# (evalkit.report.terminal) load neither numpy's report statistics, jinja2 nor matplotlib
FORMATS: dict[str, tuple[str, str]] = {
    "html": ("evalkit.report.html", "render_html"),
    "markdown": ("evalkit.report.markdown", "render_markdown"),
    "json": ("evalkit.report.jsonfmt", "render_json"),
}


def __getattr__(name: str) -> Any:
    if name in ("ReportData", "build_report"):
        return getattr(importlib.import_module("evalkit.report.data"), name)
    raise AttributeError(f"module 'evalkit.report' has no attribute {name!r}")


def render(data: ReportData, fmt: ReportFormat = "html") -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})")
    module, renderer = FORMATS[fmt]
    text: str = getattr(importlib.import_module(module), renderer)(data)
    return text


def write_report(data: ReportData, output: Path, fmt: ReportFormat = "html") -> Path:
    """Render and write `output`; a file that cannot be written is an OutputError."""
    return write_output(output, render(data, fmt), option="report")
