"""What a verdict could have missed: for each cell size the gate met, the drop it catches with 80%
probability at the Holm level of its first step (α over the whole family), computed exactly for the
test it ran (`evalkit.stats.gate_power`), from the cells' median baseline rate; and, with a margin,
about how many runs per side an unchanged cell needs to be shown within it. docs/gate.md, "Power"."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import median

from evalkit.gate.config import GateConfig
from evalkit.gate.evidence import runs_needed
from evalkit.gate.family import family_size
from evalkit.gate.outcome import CellVerdict
from evalkit.stats.gate_power import GateTest, detectable_drop
from evalkit.stats.rates import rate

__all__ = ["TEST_NAMES", "power_notes"]

TEST_NAMES: dict[GateTest, str] = {
    "mcnemar": "McNemar on pairs",
    "boschloo": "Boschloo",
    "fisher": "Fisher",
    "fm": "Farrington–Manning",
    "tango": "Tango on pairs",
}
_GROUPS = 4  # cell sizes described; the rest are counted


def _group_note(cells: Sequence[CellVerdict], alpha: float, margin: float) -> str:
    v = cells[0]
    base = int(median(c.baseline.value for c in cells) * 100) / 100  # whole percent, rounded down
    caught = detectable_drop(v.kind, v.baseline.n, v.candidate.n, base, alpha, margin)
    seen = f"to {caught:.0%} or lower" if caught is not None else "not even to 0%"
    sides = (
        f"{v.baseline.n} runs per side"
        if v.baseline.n == v.candidate.n
        else (f"{v.baseline.n} baseline and {v.candidate.n} candidate runs")
    )
    return (
        f"power: {len(cells)} cell(s) with {sides} ({TEST_NAMES[v.kind]}, α/m = {alpha:.2g}, the first Holm step): "
        f"a drop from {base:.0%} {seen} is caught with 80% probability (exact)"
    )


def _margin_note(verdicts: Sequence[CellVerdict], config: GateConfig) -> list[str]:
    if config.margin <= 0:
        return []
    base = int(median(c.baseline.value for c in verdicts) * 100) / 100
    steady = rate(round(base * 1000), 1000)
    assert steady is not None
    n = runs_needed(steady, steady, config.margin, 1 - 2 * config.alpha)
    need = f"about {n} runs per side" if n is not None else "more than 100,000 runs per side"
    return [
        f"margin: an unchanged cell at {base:.0%} is shown within {round(config.margin * 100):g} points "
        f"(its {1 - 2 * config.alpha:.0%} interval above −{round(config.margin * 100):g}) with {need}"
    ]


def power_notes(verdicts: Sequence[CellVerdict], config: GateConfig, pooled: int = 0) -> list[str]:
    """One line per cell size and test (the most common first), then the margin's runs."""
    if not verdicts:
        return []
    groups: dict[tuple[int, int, GateTest], list[CellVerdict]] = defaultdict(list)
    for v in verdicts:
        groups[(v.baseline.n, v.candidate.n, v.kind)].append(v)
    alpha = config.alpha / family_size(verdicts, pooled)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0].baseline.n))
    notes = [_group_note(g, alpha, config.margin) for g in ordered[:_GROUPS]]
    if len(ordered) > _GROUPS:
        notes.append(
            f"power: {sum(len(g) for g in ordered[_GROUPS:])} more cells in {len(ordered) - _GROUPS} other sizes"
        )
    return notes + _margin_note(verdicts, config)
