"""A report of the same results files is the same file, byte for byte: its stamp is when the runs
finished (the newest footer), not the clock. So a README block that rewrites a committed report from
committed results leaves `git status` clean (issue 38: four committed reports rewritten)."""

from __future__ import annotations

from pathlib import Path

from evalkit.cli import main

RESULTS = Path(__file__).resolve().parents[2] / "results" / "forge-smollm2-0.10.0.jsonl"


def test_the_same_results_give_the_same_report(tmp_path: Path) -> None:
    pages = []
    for name in ("a.html", "b.html"):
        assert main(["report", str(RESULTS), "-o", str(tmp_path / name)]) == 0
        pages.append((tmp_path / name).read_bytes())
    assert pages[0] == pages[1]
    newest = max(
        line.split('"finished_at":"', 1)[1][:25] for line in RESULTS.read_text().splitlines() if "footer" in line
    )
    assert f"runs finished by {newest}" in pages[0].decode()


def test_run_report_of_a_finished_file_is_the_reports(tmp_path: Path) -> None:
    """`run --resume --report` on a complete file writes the page `report` writes."""
    config = Path(__file__).resolve().parents[2] / "configs" / "default.yaml"
    out = tmp_path / "r.jsonl"
    assert main(["run", str(config), "-n", "1", "-o", str(out), "--report", str(tmp_path / "a.html")]) == 0
    assert main(["run", str(config), "-n", "1", "-o", str(out), "--resume", "--report", str(tmp_path / "b.html")]) == 0
    assert main(["report", str(out), "-o", str(tmp_path / "c.html")]) == 0
    assert (tmp_path / "b.html").read_bytes() == (tmp_path / "c.html").read_bytes()
