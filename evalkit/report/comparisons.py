"""Pairwise strategy comparisons within one backend/model/mode, Holm-adjusted across the report.

Runs of two strategies pair up by (scenario, run index, seed): the runner gives every strategy the
same seeds. When every counted run of both strategies has its partner, the test is the exact
McNemar test on the discordant pairs; otherwise Boschloo's exact test on the two proportions.
Both are two-sided here: the report explores, it does not test a direction (the gate does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from evalkit.report.cells import Rate, rate
from evalkit.results import RunRecord
from evalkit.stats import Difference, boschloo, holm, mcnemar, newcombe

__all__ = ["Comparison", "compare_strategies", "paired_outcomes"]

PairKey = tuple[str, int, int]


@dataclass(frozen=True)
class Comparison:
    group: str  # "backend · model · mode"
    scope: str  # "all scenarios" or a family
    a: str
    b: str
    a_rate: Rate
    b_rate: Rate
    difference: Difference  # rate(a) − rate(b), Newcombe interval (unpaired; conservative for pairs)
    test: str
    discordant: tuple[int, int] | None  # (a passed & b failed, b passed & a failed) when paired
    p: float
    p_holm: float
    significant: bool


def _outcomes(runs: Sequence[RunRecord]) -> dict[PairKey, bool]:
    return {(r.cell.scenario, r.index, r.seed): r.completed for r in runs if r.counted}


def paired_outcomes(a: Sequence[RunRecord], b: Sequence[RunRecord]) -> list[tuple[bool, bool]] | None:
    """(a completed, b completed) per pair, or None when the runs do not pair up one to one."""
    left, right = _outcomes(a), _outcomes(b)
    if not left or left.keys() != right.keys():
        return None
    return [(left[k], right[k]) for k in sorted(left)]


def _test(a: Sequence[RunRecord], b: Sequence[RunRecord], ra: Rate, rb: Rate
          ) -> tuple[str, tuple[int, int] | None, float]:
    pairs = paired_outcomes(a, b)
    if pairs is not None:
        discordant = (sum(x and not y for x, y in pairs), sum(y and not x for x, y in pairs))
        return "McNemar exact (paired)", discordant, mcnemar(*discordant, alternative="two-sided")
    return "Boschloo exact", None, boschloo(ra.x, ra.n, rb.x, rb.n, alternative="two-sided")


def _compare(group: str, scope: str, by_strategy: dict[str, list[RunRecord]], confidence: float
             ) -> list[Comparison]:
    out = []
    for a, b in combinations(by_strategy, 2):
        ra = rate(sum(r.completed for r in by_strategy[a] if r.counted),
                  sum(r.counted for r in by_strategy[a]), confidence)
        rb = rate(sum(r.completed for r in by_strategy[b] if r.counted),
                  sum(r.counted for r in by_strategy[b]), confidence)
        if ra is None or rb is None:
            continue
        test, discordant, p = _test(by_strategy[a], by_strategy[b], ra, rb)
        out.append(Comparison(group, scope, a, b, ra, rb, newcombe(ra.x, ra.n, rb.x, rb.n, confidence),
                              test, discordant, p, p_holm=p, significant=False))
    return out


def compare_strategies(groups: dict[tuple[str, str], dict[str, list[RunRecord]]], *, alpha: float = 0.05,
                       confidence: float = 0.95) -> list[Comparison]:
    """`groups` maps (group label, scope) to strategy → runs, strategies in display order."""
    raw = [c for (group, scope), by_strategy in groups.items()
           for c in _compare(group, scope, by_strategy, confidence)]
    adjusted = holm([c.p for c in raw])
    return [replace(c, p_holm=p_adj, significant=p_adj <= alpha) for c, p_adj in zip(raw, adjusted, strict=True)]
