"""Two columns that claim the same behaviour, side by side: a config's `side_by_side` pairs (e.g. a
Forge proxy stack and evalkit's copy of it), per family and over all scenarios.

Each line has both correct rates with their intervals, what each side's runs cost in model calls the
model server served (a guard proxy's own retries included), the difference with its Newcombe
interval, and a two-sided exact test: McNemar when the two sides' runs pair by scenario, index and
seed, else Boschloo's. Holm's correction runs over every line of the table. The pairs come from the
results headers' configs, so the report reads only the results file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from evalkit.report.cells import CellStats
from evalkit.report.comparisons import DiscordantPairs, two_sided
from evalkit.results.runs import Results, RunRow
from evalkit.run.config import CellRef, SideBySide
from evalkit.stats.proportions import Difference, newcombe
from evalkit.stats.pvalues import holm
from evalkit.stats.rates import Rate

__all__ = ["SideBySideLine", "configured_pairs", "side_by_side"]


@dataclass(frozen=True)
class Side:
    column: str  # "backend · mode · strategy"
    correct: Rate | None
    served_calls: float | None  # model calls per counted run, as the model server served them
    seen_calls: float | None  # ... as evalkit's client saw them
    simulated: bool


@dataclass(frozen=True)
class SideBySideLine:
    claim: str
    scope: str  # "all scenarios" or a family
    left: Side
    right: Side
    difference: Difference | None  # left − right
    test: str
    p: float | None
    p_holm: float | None
    significant: bool


def configured_pairs(results: Results[RunRow]) -> list[SideBySide]:
    """The `side_by_side` pairs of the results headers' configs, each once, in the order given."""
    seen: dict[str, SideBySide] = {}
    for header in results.headers:
        items = header.config.get("side_by_side") or []
        if not isinstance(items, list):
            continue  # results are data: a header that does not hold a list has no pairs
        for item in items:
            try:
                pair = SideBySide.model_validate(item)
            except ValidationError:
                continue  # a header from a later evalkit with fields this one does not know
            # a resumed file repeats its config's pairs in each header: each pair is one line, once
            seen.setdefault(pair.model_dump_json(), pair)
    return list(seen.values())


def _column(ref: CellRef) -> str:
    return f"{ref.backend} · {ref.mode} · {ref.strategy}"


def _side(ref: CellRef, stats: CellStats | None) -> Side:
    cost = stats.cost if stats is not None else None
    return Side(
        column=_column(ref),
        correct=stats.correct if stats is not None else None,
        served_calls=cost.model_calls_mean if cost is not None else None,
        seen_calls=cost.calls_seen_mean if cost is not None else None,
        simulated=bool(stats and stats.simulated),
    )


def side_by_side(
    pairs: Sequence[SideBySide],
    scopes: Sequence[tuple[str, str]],
    column_of: dict[tuple[str, str, str], str],
    cells: dict[str, dict[str, CellStats]],
    grouped: dict[tuple[str, str], Sequence[RunRow]],
    *,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> tuple[SideBySideLine, ...]:
    """`scopes`: (row id, label) of the overall row and each family's; `column_of`: (backend, mode,
    strategy) → column id. A pair whose column has no run yet shows no rates and no test."""
    raw: list[SideBySideLine] = []
    discordant = DiscordantPairs()
    for pair in pairs:
        ids = [column_of.get((ref.backend, ref.mode, ref.strategy)) for ref in (pair.left, pair.right)]
        for row_id, scope in scopes:
            stats = [cells.get(row_id, {}).get(i) if i else None for i in ids]
            left, right = _side(pair.left, stats[0]), _side(pair.right, stats[1])
            # a side with no counted run yet is shown, without a test: the claim is named, not dropped
            if left.correct is None or right.correct is None or None in ids:
                raw.append(SideBySideLine(pair.claim, scope, left, right, None, "", None, None, False))
                continue
            runs = [grouped.get((row_id, i), []) for i in ids if i is not None]
            test, _, p = two_sided(runs[0], runs[1], left.correct, right.correct, discordant)
            lx, rx = left.correct, right.correct
            difference = newcombe(lx.x, lx.n, rx.x, rx.n, confidence)
            raw.append(SideBySideLine(pair.claim, scope, left, right, difference, test, p, None, False))
    # Holm over the lines with a test only: an untested line must not make the others stricter
    tested = {i: line.p for i, line in enumerate(raw) if line.p is not None}
    adjusted = dict(zip(tested, holm(list(tested.values())), strict=True))
    return tuple(
        SideBySideLine(**{**line.__dict__, "p_holm": adjusted[i], "significant": adjusted[i] <= alpha})
        if i in adjusted
        else line
        for i, line in enumerate(raw)
    )
