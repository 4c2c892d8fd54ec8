"""`evalkit plan`: runs per cell to catch a drop, for the test the gate will run, in every mode; the
planned power holds under the gate's own verdicts (tests/gate/test_observations.py sums them over
every outcome; here, the exact power of the test `select` picks, and a simulation of `compare`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evalkit.cli import main
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.plan import POWER, plan_cells, runs_for_drop, runs_to_show_within, sequential_runs
from evalkit.stats.gate_tests import select
from evalkit.stats.stopping_rule import cell_rule, operating_characteristics
from tests.report import records


def test_plan_gives_runs_whose_exact_power_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [*records.cell_runs(23, 25, scenario="s0"), *records.cell_runs(18, 25, scenario="s1")]
    cells = plan_cells(records.results(runs), 0.3, margin=0.1, pairing="unpaired")
    assert [c.name for c in cells] == ["sim/native/trust_text/s0", "sim/native/trust_text/s1"]
    for c in cells:
        planned = c.planned
        assert planned.runs is not None and planned.power is not None and c.within is not None
        p = c.base_x / c.base_n
        test = select(False, 0.1, "boschloo", planned.runs, planned.runs)
        assert test.kind == "chan" and planned.test == test.name
        assert planned.power == pytest.approx(test.power(planned.runs, planned.runs, p, p - 0.3, 0.1, 0.025))
        assert planned.power >= POWER > (planned.below or 0.0)  # the least runs found: one fewer falls short
    path = records.write_results(tmp_path / "base.jsonl", runs)
    assert main(["plan", str(path), "--margin", "0.1", "--pairing", "unpaired"]) == 0
    out = capsys.readouterr().out
    assert "to catch a drop of 20% (10% beyond the margin of 10%)" in out.splitlines()[0]
    assert "sim/native/trust_text/s0: 23/25: " in out and "runs per side (exact power " in out
    assert "an unchanged cell is shown within the margin with 80% at " in out
    assert out.splitlines()[-1].startswith("matrix: 2 cells")


@pytest.mark.parametrize(
    ("p", "drop", "margin", "paired"),
    [(0.96, 0.1, 0.0, True), (0.96, 0.1, 0.0, False), (1.0, 0.2, 0.1, False), (0.9, 0.25, 0.05, True)],
)
def test_the_planned_runs_catch_the_drop_in_a_simulation_of_the_gate(
    p: float, drop: float, margin: float, paired: bool
) -> None:
    """Outcomes drawn at the planned runs and gated by `compare` itself: the share of failed cells is
    the planned power, within the simulation's error (400 experiments: about ±0.06 at 3 sd)."""
    planned = runs_for_drop(p, drop, 0.05, margin=margin, paired=paired)
    assert planned.runs is not None and planned.power is not None and planned.power >= POWER
    n, rng, caught = planned.runs, np.random.default_rng(11), 0
    for _ in range(400):
        base, cand = rng.random(n) < p, rng.random(n) < p - drop
        base_runs = [records.run(index=i, completed=bool(o)) for i, o in enumerate(base)]
        cand_runs = [records.run(index=i, completed=bool(o), seed=None if paired else 7) for i, o in enumerate(cand)]
        result = compare(
            records.results(base_runs, runs_per_cell=n),
            records.results(cand_runs, runs_per_cell=n),
            GateConfig(margin=margin),
        )
        caught += result.exit_code == 1
    assert caught / 400 == pytest.approx(planned.power, abs=0.07)


def test_no_drop_is_possible_from_a_low_rate_and_a_drop_within_the_margin_is_never_caught() -> None:
    assert runs_for_drop(0.0, 0.1, 0.05).why_not == "no drop of 10% is possible from 0%"
    assert runs_for_drop(0.9, 0.05, 0.05, margin=0.05).why_not == "a drop of 5% is not beyond the margin of 5%"


def test_the_runs_to_show_an_unchanged_cell_within_the_margin() -> None:
    planned = runs_to_show_within(0.9, 0.1, 0.05, paired=False)
    assert planned.runs is not None and planned.power is not None
    test = select(False, 0.1, "boschloo", planned.runs, planned.runs)
    assert test.within_power(planned.runs, planned.runs, 0.9, 0.9, 0.1, 0.05) == pytest.approx(planned.power)
    assert planned.power >= POWER > (planned.below or 0.0)


def test_sequential_plan_is_the_stopping_rules_exact_power() -> None:
    planned, expected = sequential_runs(24, 25, 0.3, 0.05 / 4)
    assert planned.runs is not None and planned.power is not None and expected is not None
    rule = cell_rule(24, 25, planned.runs, 0.05 / 4, looks=-(-planned.runs // 5) - 1)
    assert operating_characteristics(rule, 0.96 - 0.3, 5)[0] == pytest.approx(planned.power) and planned.power >= POWER
    assert expected < planned.runs  # with nothing changed it stops early
