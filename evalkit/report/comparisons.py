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

import numpy as np

from evalkit.results.runs import RunRow
from evalkit.results.table import pair_keys
from evalkit.stats.proportions import Difference, newcombe
from evalkit.stats.pvalues import boschloo, holm, mcnemar
from evalkit.stats.rates import Rate, rate

__all__ = ["Comparison", "ComparisonKind", "DiscordantPairs", "compare", "two_sided"]

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


class DiscordantPairs:
    """Discordant pairs of `correct` between two cells' runs. Each cell's counted runs are held by
    pair key, sorted, as arrays (17 bytes a run) built once: a pooled cell is a side of many
    comparisons."""

    def __init__(self) -> None:
        self._held: dict[int, tuple[Sequence[RunRow], np.ndarray | None, np.ndarray]] = {}
        self._scenarios: dict[str, int] = {}  # one numbering for every cell's keys

    def _of(self, runs: Sequence[RunRow]) -> tuple[np.ndarray | None, np.ndarray]:
        """(the counted runs' pair keys, sorted, or None when two share one; their `correct`)."""
        held = self._held.get(id(runs))
        # held by id, and the runs kept with it: a freed cell's id may be reused by another
        if held is None or held[0] is not runs:
            keys, counted, correct = pair_keys(runs, self._scenarios)
            keys, correct = keys[counted], correct[counted]
            # sorted keys compare two cells with one array_equal, not a dict lookup a run
            order = np.argsort(keys, kind="stable")
            keys, correct = keys[order], correct[order]
            # two runs with one key (a repeated seed) cannot pair one to one: the test is unpaired
            unique = not np.any(keys[1:] == keys[:-1])
            held = self._held[id(runs)] = (runs, keys if unique else None, correct)
        return held[1], held[2]

    def count(self, a: Sequence[RunRow], b: Sequence[RunRow]) -> tuple[int, int] | None:
        """(a correct and b not, b correct and a not) over the pairs, or None when the counted runs
        do not pair up one to one by (scenario, run index, seed)."""
        (left, x), (right, y) = self._of(a), self._of(b)
        # paired only when every counted run of each side has its partner: a partial pairing would
        # test a subset chosen by which runs failed to count
        if left is None or right is None or not len(left) or not np.array_equal(left, right):
            return None
        return int(np.count_nonzero(x & ~y)), int(np.count_nonzero(y & ~x))

    def correct_rate(self, runs: Sequence[RunRow], confidence: float) -> Rate | None:
        """The rate of `correct` over the counted runs."""
        correct = self._of(runs)[1]
        return rate(int(np.count_nonzero(correct)), len(correct), confidence)


def two_sided(
    a: Sequence[RunRow], b: Sequence[RunRow], ra: Rate, rb: Rate, pairs: DiscordantPairs
) -> tuple[str, tuple[int, int] | None, float]:
    """The two-sided exact test of correct(a) against correct(b): McNemar on the discordant pairs when
    the runs pair one to one, else Boschloo on the two proportions. (name, discordant pairs, p)."""
    discordant = pairs.count(a, b)
    if discordant is not None:
        return "McNemar exact (paired)", discordant, mcnemar(*discordant, alternative="two-sided")
    return "Boschloo exact", None, boschloo(ra.x, ra.n, rb.x, rb.n, alternative="two-sided")


def _compare(
    kind: ComparisonKind,
    group: str,
    scope: str,
    sides: dict[str, Sequence[RunRow]],
    confidence: float,
    pairs: DiscordantPairs,
) -> list[Comparison]:
    out = []
    # once per side, not per pair
    rates = {label: pairs.correct_rate(runs, confidence) for label, runs in sides.items()}
    for a, b in combinations(sides, 2):
        ra, rb = rates[a], rates[b]
        if ra is None or rb is None:
            continue
        test, discordant, p = two_sided(sides[a], sides[b], ra, rb, pairs)
        out.append(
            Comparison(
                kind,
                group,
                scope,
                a,
                b,
                ra,
                rb,
                newcombe(ra.x, ra.n, rb.x, rb.n, confidence),
                test,
                discordant,
                p,
                p_holm=p,
                significant=False,
            )
        )
    return out


def compare(
    groups: dict[tuple[ComparisonKind, str, str], dict[str, Sequence[RunRow]]],
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
) -> list[Comparison]:
    """`groups` maps (kind, shared label, scope) to side label → runs, sides in display order.

    Holm's correction runs over every comparison at once, so "significant" means the same thing
    in both tables."""
    pairs = DiscordantPairs()
    raw = [
        c
        for (kind, group, scope), sides in groups.items()
        for c in _compare(kind, group, scope, sides, confidence, pairs)
    ]
    adjusted = holm([c.p for c in raw])
    return [replace(c, p_holm=p_adj, significant=p_adj <= alpha) for c, p_adj in zip(raw, adjusted, strict=True)]
