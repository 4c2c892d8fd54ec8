"""One multiplicity family: every test the gate runs on a comparison (each cell's drop test, each
floor test) is Holm-adjusted together at α, so the family-wise false alarm stays ≤ α however many
options are on (docs/gate.md, "One family"). Two families at α each let an unchanged cell at its
floor fail with probability 0.081 at N = 25 (exact, over every outcome table); one family, ≤ 0.05.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evalkit.gate.outcome import CellVerdict
from evalkit.stats.pvalues import floor_pvalue, holm

__all__ = ["adjust", "family_size", "floor_notes", "pts", "pts_abs"]


def family_size(verdicts: Sequence[CellVerdict], pooled: int = 0) -> int:
    """Tests in the Holm family: each cell's drop test, each floor test, each stratified test."""
    return len(verdicts) + sum(v.floor_p is not None for v in verdicts) + pooled


def pts(value: float) -> str:
    points = round(value * 100)
    return f"{points:+d}" if points else "0"


def _reasons(v: CellVerdict, alpha: float, margin: float) -> tuple[str, ...]:
    out = []
    if v.p_holm <= alpha and v.difference.estimate < 0:
        d = v.difference
        beyond = f" by more than the margin of {pts_abs(margin)} pts" if margin > 0 else ""
        out.append(
            f"{v.metric} rate dropped{beyond} {v.baseline.value:.0%} → {v.candidate.value:.0%} "
            f"({pts(d.estimate)} pts, {v.confidence:.0%} CI [{pts(d.low)}, {pts(d.high)}]); "
            f"one-sided {v.test} p = {v.p:.4f}, Holm-adjusted {v.p_holm:.4f} ≤ α = {alpha}"
            + (f"; largest drops: {', '.join(v.worst)}" if v.worst else "")
        )
    if v.floor is not None and v.floor_p_holm is not None and v.floor_p_holm <= alpha:
        out.append(
            f"{v.metric} rate {v.candidate.x}/{v.candidate.n} is under the floor {v.floor:.0%}: "
            f"one-sided exact binomial p = {v.floor_p:.4f}, Holm-adjusted {v.floor_p_holm:.4f} ≤ α = {alpha}"
        )
    return tuple(out)


def pts_abs(value: float) -> str:
    return f"{round(value * 100):g}"


def adjust(
    verdicts: list[CellVerdict], alpha: float, margin: float = 0.0, pooled: Sequence[float] = ()
) -> tuple[list[CellVerdict], list[float]]:
    """Holm across every test (cells' drops, floors and the `pooled` stratified p-values together):
    the cells with their adjusted p-values and reasons, and the pooled tests' adjusted p-values."""
    tests = [(i, "p") for i in range(len(verdicts))]
    tests += [(i, "floor_p") for i, v in enumerate(verdicts) if v.floor_p is not None]
    raw = [float(getattr(verdicts[i], field)) for i, field in tests] + list(pooled)
    adjusted_p = holm(raw)
    adjusted = list(verdicts)
    for (i, field), p in zip(tests, adjusted_p, strict=False):
        if field == "p":
            adjusted[i] = replace(adjusted[i], p_holm=p)
        else:
            adjusted[i] = replace(adjusted[i], floor_p_holm=p)
    return [replace(v, reasons=_reasons(v, alpha, margin)) for v in adjusted], list(adjusted_p[len(tests) :])


def floor_notes(verdicts: Sequence[CellVerdict], alpha: float) -> tuple[list[str], list[str]]:
    floored = [v for v in verdicts if v.floor is not None]
    if not floored:
        return [], []
    m = family_size(verdicts)
    notes = [
        f'floor: one-sided exact binomial test of "rate ≥ floor" per cell, in one Holm family of {m} tests '
        f"with the cells' drop tests: a cell whose true rate equals its floor fails with probability "
        f"≤ {alpha / m:.4g} (≤ α = {alpha} for all tests together)"
    ]
    unreachable = sorted(
        {
            (v.floor, v.candidate.n)
            for v in floored
            if v.floor is not None and floor_pvalue(0, v.candidate.n, v.floor) > alpha / m
        }
    )
    warnings = [
        f"floor {f:.0%} cannot fail a cell of {n} runs: even 0/{n} is not significantly under it at "
        f"α/{m}; run more runs per cell"
        for f, n in unreachable
    ]
    return notes, warnings
