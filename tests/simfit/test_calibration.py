"""`evalkit sim check --report`: the calibration page, one point per cell, escaped, labelled SIMULATED."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.report.calibration import render_calibration
from evalkit.simfit.check import CellFit, CheckResult, StackPrediction

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '<script>alert("x")</script>'


def _rows(page: str) -> int:
    return len(re.findall(r'<tr class="cell', page))


def test_the_page_has_one_row_per_cell_and_escapes_names() -> None:
    cells = [
        CellFit("a.jsonl", "prompt", "trust_text", HOSTILE, 5, 0, 0.85, 0.4, 1.0),
        CellFit("a.jsonl", "prompt", "trust_text", "ok", 20, 10, 0.5, 0.3, 0.7),
        CellFit("a.jsonl", "native", HOSTILE, "ok", 10, 9, 0.8, 0.5, 1.0),
    ]
    stacks = [StackPrediction(HOSTILE, 35, 0.54, 0.6, 0.4, 0.8)]
    page = render_calibration(CheckResult(cells, stacks), "SIMULATED (fitted to m from a.jsonl)", ["a.jsonl"])
    assert _rows(page) == 3 and page.count(' class="cell outside"') == 1
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "1 of 3 cells inside" not in page and "2 of 3 cells inside the 95% prediction interval (67%)" in page
    assert "[SIMULATED]" in page and "SIMULATED PREDICTIONS" in page and "<svg" in page
    # one circle per cell in the plot: matplotlib draws each as a <use> of its series' marker path (a
    # circle's path starts on its rim, a tick's at its centre), and one more per series in the legend
    circles = re.findall(r'<path id="(calibration-m[0-9a-f]+)" d="M 0 [1-9]', page)
    assert len(circles) == 2 and sum(page.count(f'xlink:href="#{c}"') for c in circles) == 3 + 2


@pytest.fixture
def at_root() -> Iterator[None]:
    before = os.getcwd()
    os.chdir(ROOT)  # scenarios/ and results/ as a user in the checkout has them
    yield
    os.chdir(before)


def test_check_writes_the_page(at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cal" / "smollm2.html"
    args = ["sim", "check", "fitted/smollm2", "results/compare-models.jsonl", "--draws", "2", "--runs", "2"]
    assert main([*args, "--report", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {out}"
    page = out.read_text()
    assert _rows(page) == 16 and "compare-models.jsonl" in page
    assert str(ROOT) not in page and str(tmp_path) not in page  # file names only


def test_an_unwritable_report_is_an_input_error(at_root: None, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    args = ["sim", "check", "fitted/smollm2", "results/compare-models.jsonl", "--draws", "1", "--runs", "1"]
    assert main([*args, "--report", str(tmp_path / "file" / "x.html")]) == 2
