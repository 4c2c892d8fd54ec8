"""The stratified view (`stratified: true`, `--stratified`): one Cochran–Mantel–Haenszel test over
all judged cells, and one per scenario family at the scenario level, in the cells' Holm family, so
a broad small drop that no single cell proves is seen without raising the family-wise α (see
`evalkit.stats.stratified` and docs/gate.md, "Stratified")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from evalkit.stats.rates import Rate
from evalkit.stats.stratified import Stratified, cmh

__all__ = ["stratified_tests"]


Cell = tuple[str, str, Rate, Rate]  # family, scenario, baseline, candidate


def stratified_tests(cells: Sequence[Cell], confidence: float) -> list[tuple[str, int, Stratified]]:
    """(name, cells, result) for all cells and, when cells carry families, for each family."""
    groups: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        groups["all cells"].append(cell)
        # per family only at the scenario level: a pooled cell is no stratum of one family
        if cell[0] and cell[1]:
            groups[f"family {cell[0]}"].append(cell)
    out = []
    for name, members in sorted(groups.items(), key=lambda g: (g[0] != "all cells", g[0])):
        if name != "all cells" and len(members) == len(cells):
            continue  # one family holds every cell: the same test twice
        result = cmh([(b.x, b.n, c.x, c.n) for _, _, b, c in members], confidence)
        # no stratum with variance (every run passed, or failed): nothing to test
        if result is not None:
            out.append((name, len(members), result))
    return out
