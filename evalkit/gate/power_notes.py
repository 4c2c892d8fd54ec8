"""What a verdict could have missed: for each cell size and test the gate met, the drop it catches
with 80% probability at the Holm level of its first step (α over the whole family), computed exactly
for the test it ran (`evalkit.stats.gate_tests`), from the cells' median baseline rate rounded to a
whole percent; and, with a margin, the runs per side at which an unchanged cell at that rate is
shown within it with 80% probability (`evalkit.gate.plan.runs_to_show_within`). docs/gate.md, "Power"."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import median

from evalkit.gate.config import GateConfig
from evalkit.gate.family import family_size
from evalkit.gate.outcome import CellVerdict, pts_abs
from evalkit.gate.plan import runs_to_show_within
from evalkit.stats.gate_tests import GateKind, by_kind, detectable_drop

__all__ = ["power_notes"]

_GROUPS = 4  # cell sizes described; the rest are counted


def _median_rate(cells: Sequence[CellVerdict]) -> float:
    return round(median(c.baseline.value for c in cells) * 100) / 100  # whole percent, rounded


def _group_note(cells: Sequence[CellVerdict], alpha: float, margin: float) -> str:
    # the cells of a group share their sizes and test: the first one speaks for them
    v = cells[0]
    test = by_kind(v.kind)
    base = _median_rate(cells)
    caught = detectable_drop(test, v.baseline.n, v.candidate.n, base, alpha, margin)
    if base <= 0:
        claim = "at 0% no drop is possible, so none can be caught"
    elif caught is None:
        claim = f"even a drop from {base:.0%} to 0% is caught with less than 80% probability (exact)"
    else:
        claim = f"a drop from {base:.0%} to {caught:.0%} or lower is caught with 80% probability (exact)"
    sides = (
        f"{v.baseline.n} pairs"
        if test.paired
        else f"{v.baseline.n} runs per side"
        if v.baseline.n == v.candidate.n
        else f"{v.baseline.n} baseline and {v.candidate.n} candidate runs"
    )
    return f"power: {len(cells)} cell(s) with {sides} ({test.name}, α/m = {alpha:.2g}, the first Holm step): {claim}"


def _margin_note(verdicts: Sequence[CellVerdict], config: GateConfig) -> list[str]:
    if config.margin <= 0:
        return []
    base = _median_rate(verdicts)
    # one figure for the whole gate: the design most of its cells had
    paired = sum(v.counts.paired for v in verdicts) * 2 >= len(verdicts)
    planned = runs_to_show_within(base, config.margin, config.alpha, paired=paired, test=config.test)
    side = "pairs" if paired else "runs per side"
    need = f"at {planned.runs:,} {side}" if planned.runs is not None else f"not within {planned.why_not}"
    return [
        f"margin: an unchanged cell at {base:.0%} (the cells' median) is shown within {pts_abs(config.margin)} "
        f"points (its {1 - 2 * config.alpha:.0%} interval above −{pts_abs(config.margin)}) with 80% probability "
        f"{need} (exact)"
    ]


def power_notes(verdicts: Sequence[CellVerdict], config: GateConfig, pooled: int = 0) -> list[str]:
    """One line per cell size and test (the most common first), then the margin's runs."""
    if not verdicts:
        return []
    groups: dict[tuple[int, int, GateKind], list[CellVerdict]] = defaultdict(list)
    for v in verdicts:
        groups[(v.baseline.n, v.candidate.n, v.kind)].append(v)
    # Holm's first step is the strictest: power there is what every cell is sure to have
    alpha = config.alpha / family_size(verdicts, pooled)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0].baseline.n))
    notes = [_group_note(g, alpha, config.margin) for g in ordered[:_GROUPS]]
    if len(ordered) > _GROUPS:
        notes.append(
            f"power: {sum(len(g) for g in ordered[_GROUPS:])} more cells in {len(ordered) - _GROUPS} other sizes"
        )
    return notes + _margin_note(verdicts, config)
