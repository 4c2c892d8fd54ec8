"""The HTML report in a real headless Chromium: it loads without console errors or network requests,
shows the matrix, the plots and the transcripts, and a screenshot lands in tests/artifacts/."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from tests.report import browser
from tests.report.test_report_data import XSS_REPLY, SimRun, shared_sim_run

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"  # gitignored
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    return shared_sim_run(tmp_path_factory)


@pytest.fixture(autouse=True)
def _chromium() -> None:
    browser.skip_without_chromium()


BROKEN_PAGE = """<!DOCTYPE html><html><head><title>broken</title>
<link rel="stylesheet" href="http://127.0.0.1:9/missing.css"></head><body><p>text</p>
<script>console.error("boom-console"); console.log("just a log"); alert("injected");</script>
<img src="missing.png">
<script>throw new Error("boom-exception")</script>
</body></html>"""


def test_the_helper_sees_console_errors_exceptions_dialogs_and_requests(tmp_path: Path) -> None:
    """The report test below is only as good as this: every kind of error must show up."""
    page_path = tmp_path / "broken.html"
    page_path.write_text(BROKEN_PAGE, encoding="utf-8")
    page = browser.load(page_path, probe="document.title")
    assert page.value == "broken"
    errors = "\n".join(page.errors)
    for expected in ("boom-console", "boom-exception", "alert dialog: injected", "ERR_FILE_NOT_FOUND"):
        assert expected in errors
    assert "just a log" not in errors and "log: just a log" in page.messages
    assert page.requests[0] == page.url
    assert page.external_requests == ["http://127.0.0.1:9/missing.css", (tmp_path / "missing.png").as_uri()]


PROBE = """(() => {
  const table = document.getElementById("matrix-table");
  const box = table.getBoundingClientRect();
  const banner = document.getElementById("simulated-banner");
  const plots = [...document.querySelectorAll("figure.plot svg")].map(svg => {
    const b = svg.getBoundingClientRect();
    return [b.width, b.height];
  });
  return {
    title: document.title,
    matrixRows: table.querySelectorAll("tbody tr").length,
    matrixBox: [box.width, box.height],
    strategies: [...table.querySelectorAll("th.strategy")].map(th => th.textContent.trim()),
    rowHeads: [...table.querySelectorAll("th.rowhead")].map(th => th.textContent.trim()),
    firstCell: table.querySelector("tbody td").innerText,
    plots: plots,
    scripts: document.scripts.length,
    handlers: [...document.querySelectorAll("*")].filter(e => [...e.attributes].some(a => a.name.startsWith("on")))
      .length,
    banner: banner ? banner.getBoundingClientRect().height : 0,
    transcripts: document.querySelectorAll("details.transcript").length,
    openDrilldowns: [...document.querySelectorAll("div.cell > .cellbody")].filter(e => e.offsetHeight > 0).length,
    injectedShownAsText: document.body.textContent.includes(XSS),
    pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
  };
})()"""


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_report_opens_in_chromium_with_the_matrix_and_no_errors(sim_run: SimRun, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert main(["report", str(sim_run.path), "-o", str(report)]) == 0
    page = browser.load(report, probe=PROBE.replace("XSS", json.dumps(XSS_REPLY)))
    assert page.errors == [], page.stderr[-3000:]
    assert page.external_requests == []
    facts: dict[str, Any] = page.value
    data = sim_run.data
    assert facts["title"].startswith("[SIMULATED] ")
    assert facts["matrixRows"] == len(data.rows)
    assert facts["strategies"] == [c.strategy for c in data.columns]
    assert facts["rowHeads"] == [r.label for r in data.rows]
    width, height = facts["matrixBox"]
    assert width > 300 and height > 20 * len(data.rows)  # laid out, not collapsed
    overall = data.cell(data.rows[0], data.columns[0])
    assert overall is not None and overall.completed is not None
    assert overall.correct is not None
    assert facts["firstCell"].split()[0] == f"{overall.correct.value * 100:.0f}%"  # correct leads the cell
    families = [r for r in data.rows if r.kind == "family"]
    # + heatmap, retries, failures; no latency plot of simulated columns (test_browser_pages.py)
    assert len(facts["plots"]) == len(families) + 3 and all(w > 200 and h > 100 for w, h in facts["plots"])
    assert facts["scripts"] == 0 and facts["handlers"] == 0
    assert facts["banner"] > 0
    assert facts["transcripts"] == sum(len(d.failed) + (d.passing is not None) for d in data.drilldowns)
    assert facts["openDrilldowns"] == 0  # closed until a cell's link makes one the target
    assert facts["injectedShownAsText"]  # the model's "<script>" is on the page as text, and never ran
    assert facts["pageOverflow"] <= 0  # wide tables scroll inside their own box, not the page

    png = browser.screenshot(report, ARTIFACTS / "report.png")
    assert _png_size(png) == (1280, 2000)


FIRST_SCREEN = """(() => {
  const inView = el => {
    if (!el) return false;
    const b = el.getBoundingClientRect();
    return b.height > 0 && b.top >= 0 && b.bottom <= window.innerHeight && b.left >= 0 && b.right <= window.innerWidth;
  };
  const strategies = [...document.querySelectorAll("#matrix-table th.strategy")];
  const visibleStrategies = strategies.filter(th => {
    const b = th.getBoundingClientRect();
    const box = document.querySelector(".matrix-box").getBoundingClientRect();
    return b.top >= 0 && b.bottom <= window.innerHeight && b.left >= box.left && b.left < box.right;
  });
  return {
    summaryHeading: inView(document.querySelector("#findings h2")),
    firstFinding: inView(document.querySelector("#findings-table tbody tr")),
    matrixCorner: inView(document.querySelector("#matrix-table th.corner")),
    matrixGroup: inView(document.querySelector("#matrix-table th.group")),
    visibleStrategies: visibleStrategies.length,
    findingsRows: document.querySelectorAll("#findings-table tbody tr").length,
    findingsHidden: (box => box.scrollHeight - box.clientHeight)(document.querySelector(".findings-box")),
    pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
    width: window.innerWidth,
  };
})()"""

OPENED = """(() => {
  const target = document.querySelector(location.hash);
  const body = target.querySelector(".cellbody");
  const b = target.getBoundingClientRect();
  return {shown: body.offsetHeight > 0, top: b.top, closed: [...document.querySelectorAll("div.cell > .cellbody")]
    .filter(e => e.offsetHeight > 0).length};
})()"""


@pytest.mark.parametrize("source", ["sim", "adr013", "compare-models"])
def test_first_screen_at_1400_shows_the_summary_and_the_matrix_headers(
    source: str, sim_run: SimRun, tmp_path: Path
) -> None:
    """At 1400×900 a reader sees the findings, every row of them (no inner scroll box hides one),
    and, up to eight findings, the matrix's headers without scrolling; the page never scrolls
    sideways (the matrix scrolls in its own box)."""
    results = sim_run.path if source == "sim" else ROOT / "results" / f"{source}.jsonl"
    report = tmp_path / f"{source}.html"
    assert main(["report", str(results), "-o", str(report)]) == 0
    page = browser.load(report, probe=FIRST_SCREEN, width=1400, height=900)
    assert page.errors == [] and page.external_requests == []
    facts: dict[str, Any] = page.value
    assert facts["width"] == 1400
    assert facts["summaryHeading"] and facts["firstFinding"], facts
    assert facts["findingsHidden"] <= 0, facts
    if facts["findingsRows"] <= 8:
        assert facts["matrixCorner"] and facts["matrixGroup"] and facts["visibleStrategies"] >= 4, facts
    assert facts["pageOverflow"] <= 0, facts
    png = browser.screenshot(report, ARTIFACTS / f"first-screen-{source}.png", width=1400, height=900)
    assert _png_size(png) == (1400, 900)


def test_a_matrix_cell_link_opens_its_drill_down(sim_run: SimRun, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert main(["report", str(sim_run.path), "-o", str(report)]) == 0
    drill = sim_run.data.drilldowns[0].id
    page = browser.load(report, probe=OPENED, width=1400, height=900, fragment="#" + drill)
    assert page.errors == []
    assert page.value["shown"] and page.value["closed"] == 1 and 0 <= page.value["top"] < 100, page.value


def test_a_wide_matrix_shows_every_column_on_a_1366_screen(tmp_path: Path) -> None:
    """ADR-013's matrix has 22 columns (three backends × two modes × three stacks, and four Forge proxy
    entries of one column each, whose long labels wrap): on a common laptop screen every one of them
    is in view, none behind a sideways scroll."""
    report = tmp_path / "adr013.html"
    assert main(["report", str(ROOT / "results" / "adr013.jsonl"), "-o", str(report)]) == 0
    probe = """(() => {
      const box = document.querySelector(".matrix-box"), table = document.querySelector("#matrix-table");
      return {hidden: table.scrollWidth - box.clientWidth, columns: table.querySelectorAll("th.strategy").length,
              compact: table.classList.contains("compact")};
    })()"""
    page = browser.load(report, probe=probe, width=1366, height=900)
    assert page.errors == []
    assert page.value["columns"] == 22 and page.value["compact"], page.value
    assert page.value["hidden"] <= 0, page.value
