"""A gate across two different configs sums up the cells it cannot pair: one line per kind (only in
the baseline, only in the candidate, in another setup), with the count and a few names, instead of one line per cell
(issue 38: 357 "not in the baseline" lines). `-v` and the markdown's folded list keep every cell; within
one config a missing cell is a hole in the candidate's run and keeps its own line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main

RESULTS = Path(__file__).resolve().parents[2] / "results"
# two configs: compare-models (two real models, prompt mode) and adr013 (its own scenarios and stacks)
ACROSS = ("--baseline", str(RESULTS / "compare-models.jsonl"), "--candidate", str(RESULTS / "adr013.jsonl"))
# one config (forge-smollm2.yaml), the candidate run for two of its backends at -n 3
WITHIN = (
    "--baseline",
    str(RESULTS / "forge-smollm2.jsonl"),
    "--candidate",
    str(RESULTS / "forge-smollm2-0.10.0.jsonl"),
)


def _gate(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["gate", *args]) == 4  # cells not judged
    return capsys.readouterr().out.splitlines()


def test_across_configs_one_line_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _gate(capsys, *ACROSS)
    assert "108 not judged" in lines[0], lines[0]  # 26 + 70 + 12 in another setup
    only_candidate = [line for line in lines if "not in the baseline" in line]
    only_baseline = [line for line in lines if "missing in the candidate" in line]
    assert len(only_candidate) == 1 and len(only_baseline) == 1, lines
    assert only_candidate[0].startswith("not judged: 70 cells: not in the baseline ("), only_candidate
    assert only_baseline[0].startswith("not judged: 26 cells: missing in the candidate ("), only_baseline
    assert sum("unsupported in the candidate only" in line for line in lines) == 1, lines
    assert len(lines) < 20, lines


def test_verbose_lists_every_cell(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _gate(capsys, *ACROSS, "-v")
    assert sum(line.endswith(": not in the baseline") for line in lines) == 70


def test_the_markdown_sums_up_and_keeps_each_cell_folded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "gate.md"
    _gate(capsys, *ACROSS, "--markdown", str(out))
    text = out.read_text(encoding="utf-8")
    head, folded = text.split("<details><summary>108 cells not judged</summary>", 1)
    assert "- 70 cells: not in the baseline (" in head and "- 26 cells: missing in the candidate (" in head
    assert sum(line.endswith(": not in the baseline") for line in folded.splitlines()) == 70


def test_within_one_config_each_missing_cell_keeps_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _gate(capsys, *WITHIN)
    assert sum(line.endswith(": missing in the candidate") for line in lines) == 28
