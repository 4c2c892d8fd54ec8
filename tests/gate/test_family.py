"""One multiplicity family: every test the gate runs (cell drops, floors) is Holm-adjusted together,
so the family-wise false alarm stays ≤ α however many options are on."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from tests.report import records


def fails(xb: int, xc: int, n: int, floor: float) -> bool:
    base = records.results(records.cell_runs(xb, n), runs_per_cell=n)
    cand = records.results(records.cell_runs(xc, n, seed=7), runs_per_cell=n)  # unpaired: Boschloo
    return bool(compare(base, cand, GateConfig(level="cell", floor=floor)).failed)


@pytest.mark.parametrize("rate", [0.8])
def test_an_unchanged_cell_at_its_floor_fails_at_most_alpha(rate: float) -> None:
    """Exact, over every outcome table: baseline and candidate both at the floor's rate (the least
    favourable point for both nulls). Two Holm families gave 0.081 here; one family stays ≤ α."""
    n = 25
    pmf = sps.binom.pmf(np.arange(n + 1), n, rate)
    alarm = sum(pmf[xb] * pmf[xc] for xb in range(n + 1) for xc in range(n + 1) if fails(xb, xc, n, rate))
    assert alarm <= 0.05


def test_the_floor_and_the_cells_share_one_holm_family() -> None:
    runs = records.cell_runs(18, 25)
    result = compare(
        records.results(runs), records.results(records.cell_runs(18, 25, seed=7)), GateConfig(level="cell", floor=0.9)
    )
    (v,) = result.cells
    assert v.floor_p is not None
    # two tests in the family: the smaller p is multiplied by 2 (Holm's first step)
    assert v.floor_p_holm == pytest.approx(min(1.0, 2 * v.floor_p))
    assert "one Holm family of 2 tests" in result.notes[-2] or any(
        "one Holm family of 2 tests" in n for n in result.notes
    )
