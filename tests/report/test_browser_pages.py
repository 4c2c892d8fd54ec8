"""The committed report pages in headless Chromium at a laptop's 1,366 × 768 (issue 31, item 3):
nothing wider than the screen, no inner scroll box that hides rows in a print or a full-page
capture, a best stack only where it beats nothing, stacks too uncertain to compare apart, every
findings stack with its guards, BFCL's named rules on the page that counts disagreements,
published rows with intervals, no simulated latency drawn, and adr013's findings on its first screen.

reports/adr013.html is rendered here from its results with the README's command (another branch
regenerates the committed page; the template is what this test holds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.report.data import ReportData, build_report
from evalkit.results.reader import load_results
from tests.report import browser

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ("bfcl-wide", "compare-models", "compare-models-bfcl")
SOURCES = {  # the results each committed page was made from (the README's commands)
    "bfcl-wide": ["results/bfcl-wide.jsonl", "results/bfcl-wide-grammar.jsonl"],
    "compare-models": ["results/compare-models.jsonl"],
    "compare-models-bfcl": ["results/compare-models-bfcl.jsonl", "results/compare-models-bfcl-grammar.jsonl"],
    "adr013": ["results/adr013.jsonl"],
}
WIDTH, HEIGHT = 1366, 768


@pytest.fixture(autouse=True)
def _chromium() -> None:
    browser.skip_without_chromium()


PROBE = """(() => {
  const vw = window.innerWidth;
  const visible = e => e.offsetWidth > 0 || e.offsetHeight > 0;
  const all = [...document.querySelectorAll("body *")].filter(visible);
  const label = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (typeof e.className === "string" && e.className ? "." + e.className : "");
  const wide = all.filter(e => e.getBoundingClientRect().width > vw + 0.5).map(label);
  const boxes = all.filter(e => {
    const s = getComputedStyle(e);
    return ["auto", "scroll", "hidden"].includes(s.overflowY) && e.scrollHeight > e.clientHeight + 1;
  }).map(label);
  const findings = [...document.querySelectorAll("#findings-table tbody tr")].map(tr => ({
    works: tr.dataset.works,
    best: tr.querySelector("td.best") ? tr.querySelector("td.best").textContent.trim() : null,
    nothing: tr.querySelector("td.nothing") ? tr.querySelector("td.nothing").textContent.trim() : null,
    tooFewInNotWorse: tr.querySelectorAll("td.not-worse .too-few").length,
    tooFew: tr.querySelectorAll("td.too-few-cell .tag").length,
    guards: [...tr.querySelectorAll(".guards")].map(g => g.textContent.trim()),
  }));
  const inView = el => { if (!el) return false; const b = el.getBoundingClientRect();
    return b.height > 0 && b.top >= 0 && b.bottom <= window.innerHeight; };
  const text = sel => [...document.querySelectorAll(sel)].map(e => e.textContent.trim());
  return {
    width: vw, pageOverflow: document.documentElement.scrollWidth - vw, wide, boxes, findings,
    findingsHeading: inView(document.querySelector("#findings h2")),
    firstFinding: inView(document.querySelector("#findings-table tbody tr")),
    sections: [...document.querySelectorAll("body > section")].map(s => s.id),
    disagree: (document.querySelector("#bfcl-score-table") || {textContent: ""}).textContent.includes("disagree"),
    rules: text("#bfcl-rules dt"),
    published: text("#published-table tr.published-row td"),
    tradeoff: !!document.querySelector("#plot-tradeoff"),
    latencyNote: !!document.querySelector("#latency-left-out"),
    findingsRule: !!document.querySelector("#findings-rule"),
  };
})()"""


def _page(name: str, tmp_path: Path) -> Path:
    if name in COMMITTED:
        return ROOT / "reports" / f"{name}.html"
    out = tmp_path / f"{name}.html"
    argv = ["report", *(str(ROOT / p) for p in SOURCES[name]), "-o", str(out)]
    assert main([*argv, "--published", str(ROOT / "configs" / "adr013-published.yaml")]) == 0
    return out


def _data(name: str) -> ReportData:
    return build_report(load_results([ROOT / p for p in SOURCES[name]]), include_power=False)


@pytest.fixture(scope="module", params=[*COMMITTED, "adr013"])
def page(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    name: str = request.param
    loaded = browser.load(_page(name, tmp_path_factory.mktemp(name)), probe=PROBE, width=WIDTH, height=HEIGHT)
    assert loaded.errors == [] and loaded.external_requests == [], loaded.errors
    return name, loaded.value


def test_nothing_is_wider_than_a_1366_screen(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    assert facts["width"] == WIDTH
    assert facts["wide"] == [] and facts["pageOverflow"] <= 0, (name, facts["wide"])


def test_no_inner_box_hides_rows(page: tuple[str, dict[str, Any]]) -> None:
    """A print or a full-page capture shows every row: no visible box cuts its content to a height."""
    name, facts = page
    assert facts["boxes"] == [], (name, facts["boxes"])


PRINTED = """(() => [...document.querySelectorAll("table")].filter(t => t.offsetHeight > 0).map(table => {
  let hidden = 0;  // the rows a box around the table cuts off, as printed
  for (let box = table.parentElement; box; box = box.parentElement) {
    const s = getComputedStyle(box);
    const clips = s.overflowY !== "visible" || s.overflowX !== "visible";
    if (clips) hidden += Math.max(0, box.scrollHeight - box.clientHeight);
  }
  return [table.id, hidden];
}).filter(([, hidden]) => hidden > 1))()"""


@pytest.mark.parametrize("name", ["bfcl-wide", "compare-models-bfcl", "adr013"])
def test_a_printed_page_shows_every_row(name: str, tmp_path: Path) -> None:
    """As printed, no table sits in a box that cuts it off (the matrix's box scrolls on screen only)."""
    printed = browser.load(_page(name, tmp_path), probe=PRINTED, width=WIDTH, height=HEIGHT, media="print")
    assert printed.errors == [] and printed.value == [], printed.value


def test_a_best_stack_only_where_it_beats_nothing_and_uncertain_stacks_apart(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    findings = _data(name).findings
    assert len(facts["findings"]) == len(findings) and facts["findingsRule"]
    for shown, finding in zip(facts["findings"], findings, strict=True):
        assert shown["works"] == ("yes" if finding.works else "no")
        if finding.works:
            assert shown["best"] and shown["best"].startswith(finding.best.stack), (name, shown)
        else:
            assert shown["best"] is None and shown["nothing"].startswith("no stack"), (name, shown)
            continue
        assert shown["tooFewInNotWorse"] == 0 and shown["tooFew"] == len(finding.too_few), (name, shown)
        # every stack whose label does not say its guards shows them
        candidates = (finding.best, *finding.not_worse, *finding.too_few)
        assert shown["guards"] == [f"({c.guards})" for c in candidates if c.name != c.stack], (name, shown)


def test_bfcl_named_rules_are_explained_where_disagreements_are_counted(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    if facts["disagree"]:
        assert facts["rules"] == list(DELIBERATE_DIFFERENCES), name


def test_published_rows_carry_intervals(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    if name == "adr013":
        rates = [cell for cell in facts["published"] if "%" in cell]
        assert rates and all("[" in cell and "/" in cell for cell in rates), rates


def test_simulated_latency_is_not_plotted(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    data = _data(name)
    assert facts["latencyNote"] == any(c.simulated for c in data.columns)
    assert facts["tradeoff"] == any(not c.simulated for c in data.columns)


def test_adr013_opens_on_its_findings(page: tuple[str, dict[str, Any]]) -> None:
    name, facts = page
    if name == "adr013":
        assert facts["sections"][0] == "findings", facts["sections"]
        assert facts["findingsHeading"] and facts["firstFinding"], facts
