"""A cell's verdict is its typed measurement plus the Holm-adjusted p-values, field for field."""

from __future__ import annotations

from dataclasses import fields

from evalkit.gate.outcome import CellMeasurement, CellVerdict
from evalkit.stats.gate_tests import Counts
from evalkit.stats.proportions import Difference
from evalkit.stats.rates import rate


def _measurement() -> CellMeasurement:
    b, c = rate(9, 10), rate(4, 10)
    assert b is not None and c is not None
    return CellMeasurement(
        backend="sim",
        mode="native",
        strategy="none",
        family="f",
        scenario="s",
        models=("m", "m"),
        metric="correct",
        baseline=b,
        candidate=c,
        counts=Counts(9, 10, 4, 10),
        kind="boschloo",
        test="Boschloo exact",
        p=0.02,
        alpha=0.05,
        difference=Difference(-0.5, -0.8, -0.1),
        confidence=0.9,
        floor=0.5,
        floor_p=0.3,
        worst=("s 9/10 → 4/10",),
    )


def test_a_verdict_adds_only_the_holm_adjusted_p_values() -> None:
    added = {f.name for f in fields(CellVerdict)} - {f.name for f in fields(CellMeasurement)}
    assert added == {"p_holm", "floor_p_holm"}


def test_judging_keeps_every_measured_field() -> None:
    measured = _measurement()
    verdict = measured.judged(0.04, 0.6)
    assert all(getattr(verdict, f.name) == getattr(measured, f.name) for f in fields(CellMeasurement))
    assert (verdict.p_holm, verdict.floor_p_holm, verdict.dropped, verdict.under_floor) == (0.04, 0.6, True, False)
