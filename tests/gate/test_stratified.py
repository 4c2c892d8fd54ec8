"""`--stratified`: a small drop in every cell, invisible to each cell's test, is seen by a
Cochran–Mantel–Haenszel test over the cells, inside the same Holm family."""

from __future__ import annotations

import pytest

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.render import render_markdown, render_text
from evalkit.stats.stratified import cmh
from tests.report import records


def broad(xb: int, xc: int, cells: int = 48, **config: object) -> object:
    base = [r for i in range(cells) for r in records.cell_runs(xb, 25, scenario=f"s{i}", family=f"f{i % 2}")]
    cand = [r for i in range(cells) for r in records.cell_runs(xc, 25, scenario=f"s{i}", family=f"f{i % 2}", seed=7)]
    return compare(records.results(base), records.results(cand), GateConfig(**config))  # type: ignore[arg-type]


def test_a_broad_small_drop_is_seen_only_by_the_stratified_test() -> None:
    assert broad(24, 22).exit_code == 0  # type: ignore[attr-defined]  # no single cell proves 96% → 88%
    result = broad(24, 22, stratified=True)
    assert not result.failed and result.exit_code == 1  # type: ignore[attr-defined]
    overall, *families = result.pooled  # type: ignore[attr-defined]
    assert overall.name == "all cells" and overall.cells == 48 and overall.failed
    assert [f.name for f in families] == ["family f0", "family f1"]
    expected = cmh([(24, 25, 22, 25)] * 48, 0.9)
    assert expected is not None and overall.result.p == pytest.approx(expected.p)
    assert overall.result.difference == pytest.approx(-0.08) and overall.result.high < 0
    text = render_text(result)  # type: ignore[arg-type]
    assert "one Holm family of 51 tests over 48 cells" in text.splitlines()[0]
    assert "FAIL stratified, all cells (48 cells): Mantel–Haenszel change -8 pts" in text
    assert "Cochran–Mantel–Haenszel" in render_markdown(result)  # type: ignore[arg-type]


def test_an_unchanged_candidate_passes_the_stratified_test() -> None:
    result = broad(22, 22, stratified=True)
    assert result.exit_code == 0 and all(not p.failed for p in result.pooled)  # type: ignore[attr-defined]


def test_with_a_margin_the_stratified_test_is_not_run_and_said_so() -> None:
    result = broad(24, 22, cells=4, stratified=True, margin=0.05)
    assert not result.pooled and any("--stratified is not run with --margin" in w for w in result.warnings)  # type: ignore[attr-defined]
