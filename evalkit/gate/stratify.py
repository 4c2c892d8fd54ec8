"""The stratified view (`stratified: true`, `--stratified`): one Cochran–Mantel–Haenszel test over
all judged cells, and one per scenario family at the scenario level, in the cells' Holm family, so
a broad small drop that no single cell proves is seen without raising the family-wise α (see
`evalkit.stats.stratified` and docs/gate.md, "Stratified")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from evalkit.gate.outcome import CellVerdict
from evalkit.stats.stratified import Stratified, cmh

__all__ = ["stratified_tests"]


def stratified_tests(verdicts: Sequence[CellVerdict], confidence: float) -> list[tuple[str, int, Stratified]]:
    """(name, cells, result) for all cells and, when cells carry families, for each family."""
    groups: dict[str, list[CellVerdict]] = defaultdict(list)
    for v in verdicts:
        groups["all cells"].append(v)
        if v.family and v.scenario:
            groups[f"family {v.family}"].append(v)
    out = []
    for name, cells in sorted(groups.items(), key=lambda g: (g[0] != "all cells", g[0])):
        if name != "all cells" and len(cells) == len(verdicts):
            continue  # one family holds every cell: the same test twice
        result = cmh([(v.baseline.x, v.baseline.n, v.candidate.x, v.candidate.n) for v in cells], confidence)
        if result is not None:
            out.append((name, len(cells), result))
    return out
