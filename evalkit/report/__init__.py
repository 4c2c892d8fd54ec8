"""Reports from results files: report data (pure) and HTML, markdown and JSON renderers.

    data = build_report(load_results(paths))
    write_report(data, Path("reports/default.html"), "html")

`write_report` writes through a temporary file and renames it, so a failed render never leaves a
half-written report behind.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from evalkit.report.data import ReportData, build_report
from evalkit.report.html import render_html
from evalkit.report.jsonfmt import render_json
from evalkit.report.markdown import render_markdown
from evalkit.results.output_file import write_output

__all__ = ["FORMATS", "ReportData", "ReportFormat", "build_report", "render", "write_report"]

ReportFormat = Literal["html", "markdown", "json"]
FORMATS: dict[str, Callable[[ReportData], str]] = {
    "html": render_html,
    "markdown": render_markdown,
    "json": render_json,
}


def render(data: ReportData, fmt: ReportFormat = "html") -> str:
    try:
        return FORMATS[fmt](data)
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(FORMATS)})") from None


def write_report(data: ReportData, output: Path, fmt: ReportFormat = "html") -> Path:
    """Render and write `output`; a file that cannot be written is an OutputError."""
    return write_output(output, render(data, fmt), option="report")
