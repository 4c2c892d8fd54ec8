"""Names from results files are data (issue 30, item 4): whatever a scenario id, a family or a backend
label holds, the gate's JUnit XML parses, its markdown tables keep their rows and columns, and its
terminal text has no control character but newlines. Before: an ESC byte in an id made `--junit`
write XML no parser reads, and a newline split the `--markdown` table (the next line a heading)."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from evalkit.cli import main
from evalkit.results.records import RunRecord
from tests.report import records

HOSTILE = {
    "esc": "id\x1b[2Jcleared",
    "newline": "id\n# a heading | and | columns",
    "carriage return": "id\rPASS",
    "nul and friends": "id\x00\x0b\x0c\x7f\x85",
    "line separator": "id\u2028next",
    "bidi override": "id\u202egnp.exe",
    "markup": "<script>alert(1)</script>`code`|pipe\\",
    "tex": "$\\frac{a$ and $\\undefined$",  # matplotlib would parse it as TeX, and raise
}
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]")


def _cells(passes: int, **fields: str) -> list[RunRecord]:
    return [
        r
        for name in HOSTILE.values()
        for r in records.cell_runs(passes, 20, scenario=name, family=fields.get("family", name), **fields)
    ]


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    base = records.write_results(tmp_path / "base.jsonl", _cells(20), runs_per_cell=20)
    # every cell regresses, and one baseline cell is missing from the candidate (not judged)
    cand = records.write_results(
        tmp_path / "cand.jsonl", [r for r in _cells(0) if r.cell.scenario != HOSTILE["bidi override"]], runs_per_cell=20
    )
    return base, cand


def _table_rows_keep_their_columns(markdown: str) -> None:
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            columns = len(re.findall(r"(?<!\\)\|", line))
            for row in lines[i + 1 :]:
                if not row.startswith("|"):
                    break
                assert len(re.findall(r"(?<!\\)\|", row)) == columns, row
    headings = [line for line in lines if line.startswith("#")]
    assert all(line.startswith("## evalkit gate") for line in headings), headings


def test_gate_files_and_text_survive_any_name(
    hostile: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = hostile
    md, junit = tmp_path / "summary.md", tmp_path / "gate.xml"
    assert (
        main(["gate", "--baseline", str(base), "--candidate", str(cand), "--markdown", str(md), "--junit", str(junit)])
        == 1
    )
    out = capsys.readouterr().out
    assert not CONTROL.search(out)
    root = ET.parse(junit).getroot()  # parses: every character is one XML 1.0 allows
    names = [case.get("name") or "" for case in root.iter("testcase")]
    assert len(names) == len(HOSTILE) and not any(CONTROL.search(n) or "\n" in n for n in names)
    assert any("\\x1b[2Jcleared" in n for n in names)  # shown escaped, not dropped
    summary = md.read_text(encoding="utf-8")
    assert not CONTROL.search(summary)
    _table_rows_keep_their_columns(summary)
    assert "&lt;script&gt;" in summary and "<script>" not in summary


def test_a_markdown_report_and_the_terminal_summary_survive_any_name(
    hostile: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = hostile
    out = tmp_path / "r.md"
    assert main(["report", str(base), "-o", str(out), "--format", "markdown"]) == 0
    text = out.read_text(encoding="utf-8")
    assert not CONTROL.search(text)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            columns = len(re.findall(r"(?<!\\)\|", line))
            assert all(len(re.findall(r"(?<!\\)\|", row)) == columns for row in lines[i + 1 :] if row.startswith("|"))
    html = tmp_path / "r.html"
    assert main(["report", str(base), "-o", str(html)]) == 0
    page = html.read_text(encoding="utf-8")
    assert not CONTROL.search(page) and "<script>alert(1)" not in page
    capsys.readouterr()
