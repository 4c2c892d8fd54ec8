"""`evalkit plan`: runs per cell to catch a drop, checked by the exact power of the gate's test."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.gate.plan import plan_cells
from evalkit.stats.gate_power import gate_power
from tests.report import records


def test_plan_gives_runs_whose_exact_power_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [*records.cell_runs(23, 25, scenario="s0"), *records.cell_runs(18, 25, scenario="s1")]
    cells = plan_cells(records.results(runs), 0.3, margin=0.1)
    assert [c.name for c in cells] == ["sim/native/trust_text/s0", "sim/native/trust_text/s1"]
    for c in cells:
        assert c.runs is not None and c.power is not None and c.margin_runs is not None
        p = c.base_x / c.base_n
        assert c.power == pytest.approx(gate_power("boschloo", c.runs, c.runs, p, p - 0.3, 0.025))
        assert c.power > 0.7  # the approximation lands near 80%; the exact figure is printed beside it
    path = records.write_results(tmp_path / "base.jsonl", runs)
    assert main(["plan", str(path), "--margin", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "sim/native/trust_text/s0: 23/25: " in out and "runs per side (exact power " in out
    assert "shown within the margin at about " in out and out.splitlines()[-1].startswith("matrix: 2 cells")
