"""One multiplicity family: every test the gate runs on a comparison (each cell's drop test, each
floor test, each stratified test) is Holm-adjusted together at α, so the family-wise false alarm
stays ≤ α however many options are on (docs/gate.md, "One family"). Two families at α each let an
unchanged cell at its floor fail with probability 0.081 at N = 25 (exact, over every outcome table);
one family, ≤ 0.05.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.gate.outcome import CellVerdict
from evalkit.stats.pvalues import floor_pvalue, holm

__all__ = ["HolmFamily", "family_size", "floor_notes"]


def family_size(verdicts: Sequence[CellVerdict], pooled: int = 0) -> int:
    """Tests in the Holm family: each cell's drop test, each floor test, each stratified test."""
    return len(verdicts) + sum(v.floor_p is not None for v in verdicts) + pooled


class HolmFamily:
    """The raw p-values of every test, then each one's Holm-adjusted p-value by the same index."""

    def __init__(self, drops: Sequence[float], floors: Sequence[float | None], pooled: Sequence[float]) -> None:
        # one list, so Holm ranks every test against every other; then read back in the same order
        raw = [*drops, *(p for p in floors if p is not None), *pooled]
        adjusted = iter(holm(raw))
        self.drops = [next(adjusted) for _ in drops]
        self.floors = [None if p is None else next(adjusted) for p in floors]
        self.pooled = list(adjusted)
        self.size = len(raw)


def floor_notes(verdicts: Sequence[CellVerdict], alpha: float, pooled: int = 0) -> tuple[list[str], list[str]]:
    floored = [v for v in verdicts if v.floor is not None]
    if not floored:
        return [], []
    m = family_size(verdicts, pooled)
    notes = [
        f'floor: one-sided exact binomial test of "rate ≥ floor" per cell, in one Holm family of {m} tests '
        f"with the cells' drop tests: a cell whose true rate equals its floor fails with probability "
        f"≤ {alpha / m:.4g} (≤ α = {alpha} for all tests together)"
    ]
    # a floor the cell's size cannot fail even at 0 passes is a gate that cannot go red: say so
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
