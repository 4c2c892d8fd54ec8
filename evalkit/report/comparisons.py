"""Pairwise comparisons of `correct`, Holm-adjusted together across the whole report.

Two kinds: strategies within one backend/model/mode ("which guard"), and models (backends) within
one mode and strategy ("which model"), each per family and over all scenarios. Runs of two cells
pair up by (scenario, run index, seed). When every counted run of both cells has its partner, the
test is the exact McNemar test on the discordant pairs; otherwise Boschloo's exact test on the two
proportions (the runner gives every strategy of a backend the same seeds; across backends the seeds
pair only when the config says so). Both are two-sided: the report explores, it does not test a
direction (the gate does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Literal

from evalkit.report.cells import Rate, rate
from evalkit.results import RunRecord
from evalkit.stats import Difference, boschloo, holm, mcnemar, newcombe

__all__ = ["Comparison", "ComparisonKind", "Metric", "compare", "paired_outcomes"]

PairKey = tuple[str, int, int]
Metric = Literal["correct", "completed"]
ComparisonKind = Literal["strategy", "model"]


@dataclass(frozen=True)
class Comparison:
    kind: ComparisonKind
    group: str  # what both sides share: "backend · model · mode" (strategies) or "mode · strategy" (models)
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


def _outcomes(runs: Sequence[RunRecord], metric: Metric) -> dict[PairKey, bool]:
    return {(r.cell.scenario, r.index, r.seed): bool(getattr(r, metric)) for r in runs if r.counted}


def paired_outcomes(a: Sequence[RunRecord], b: Sequence[RunRecord], metric: Metric = "completed"
                    ) -> list[tuple[bool, bool]] | None:
    """(a passed, b passed) per pair, or None when the runs do not pair up one to one."""
    left, right = _outcomes(a, metric), _outcomes(b, metric)
    if not left or left.keys() != right.keys():
        return None
    return [(left[k], right[k]) for k in sorted(left)]


def _test(a: Sequence[RunRecord], b: Sequence[RunRecord], ra: Rate, rb: Rate
          ) -> tuple[str, tuple[int, int] | None, float]:
    pairs = paired_outcomes(a, b, "correct")
    if pairs is not None:
        discordant = (sum(x and not y for x, y in pairs), sum(y and not x for x, y in pairs))
        return "McNemar exact (paired)", discordant, mcnemar(*discordant, alternative="two-sided")
    return "Boschloo exact", None, boschloo(ra.x, ra.n, rb.x, rb.n, alternative="two-sided")


def _correct_rate(runs: Sequence[RunRecord], confidence: float) -> Rate | None:
    counted = [r for r in runs if r.counted]
    return rate(sum(r.correct for r in counted), len(counted), confidence)


def _compare(kind: ComparisonKind, group: str, scope: str, sides: dict[str, list[RunRecord]],
             confidence: float) -> list[Comparison]:
    out = []
    for a, b in combinations(sides, 2):
        ra, rb = _correct_rate(sides[a], confidence), _correct_rate(sides[b], confidence)
        if ra is None or rb is None:
            continue
        test, discordant, p = _test(sides[a], sides[b], ra, rb)
        out.append(Comparison(kind, group, scope, a, b, ra, rb, newcombe(ra.x, ra.n, rb.x, rb.n, confidence),
                              test, discordant, p, p_holm=p, significant=False))
    return out


def compare(groups: dict[tuple[ComparisonKind, str, str], dict[str, list[RunRecord]]], *, alpha: float = 0.05,
            confidence: float = 0.95) -> list[Comparison]:
    """`groups` maps (kind, shared label, scope) to side label → runs, sides in display order.

    Holm's correction runs over every comparison at once, so "significant" means the same thing
    in both tables."""
    raw = [c for (kind, group, scope), sides in groups.items() for c in _compare(kind, group, scope, sides, confidence)]
    adjusted = holm([c.p for c in raw])
    return [replace(c, p_holm=p_adj, significant=p_adj <= alpha) for c, p_adj in zip(raw, adjusted, strict=True)]
