"""A report whose `side_by_side` pairs set most of its columns side by side exists to answer them
(Forge's proxy against evalkit's copy): that table is the first section, before the findings (issue 38: the committed
reports/forge-sim.html opened on 16 "only stack" findings rows and put the question third)."""

from __future__ import annotations

from pathlib import Path

from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.results.reader import load_results

RESULTS = Path(__file__).resolve().parents[2] / "results"


def _sections(html: str) -> list[str]:
    return [part.split('"', 1)[0] for part in html.split('<section id="')[1:]]


def test_the_side_by_side_table_comes_first() -> None:
    data = build_report(load_results([RESULTS / "forge-sim-0.10.0.jsonl"]), include_power=False)
    html = render_html(data)
    assert _sections(html)[:2] == ["side-by-side", "findings"], _sections(html)
    nav = html.split("<nav>", 1)[1].split("</nav>", 1)[0]
    assert nav.index("#side-by-side") < nav.index("#findings")


def test_a_few_pairs_among_many_columns_leave_the_findings_first() -> None:
    """results/adr013.jsonl: ADR-013's matrix, with Forge's columns added later; its findings lead."""
    data = build_report(load_results([RESULTS / "adr013.jsonl"]), include_power=False)
    sections = _sections(render_html(data))
    assert sections[0] == "findings" and sections.index("side-by-side") > sections.index("matrix"), sections


def test_without_pairs_the_findings_come_first() -> None:
    data = build_report(load_results([RESULTS / "compare-models.jsonl"]), include_power=False)
    sections = _sections(render_html(data))
    assert sections[0] == "findings" and "side-by-side" not in sections
