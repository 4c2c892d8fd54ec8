"""What a passed cell shows: within the margin (the 1 − 2α interval of candidate − baseline lies
above −D, the non-inferiority reading of the same interval the gate prints), or not enough evidence,
with about how many runs per side the observed rates would need to show it (docs/gate.md, "Margin")."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.gate.outcome import CellVerdict
from evalkit.stats.intervals import Difference, newcombe
from evalkit.stats.rates import Rate

__all__ = ["evidence_summary", "runs_needed", "within"]

_LIMIT = 100_000  # runs per side; beyond it the margin is out of reach at the observed rates


def within(difference: Difference, margin: float) -> bool:
    return margin > 0 and difference.low > -margin


def _shown(b: Rate, c: Rate, n: int, margin: float, confidence: float) -> bool:
    x_c, x_b = round(c.value * n), round(b.value * n)
    return within(newcombe(x_c, n, x_b, n, confidence), margin)


def runs_needed(b: Rate, c: Rate, margin: float, confidence: float) -> int | None:
    """The least n per side at which the interval of the observed rates, b and c, would lie above
    −margin (None: not even at 100,000 runs, e.g. the observed drop is the margin or more)."""
    if margin <= 0 or not _shown(b, c, _LIMIT, margin, confidence):
        return None
    low, high = 1, _LIMIT  # the interval narrows as n grows: bisection for the first n that shows it
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if _shown(b, c, mid, margin, confidence) else (mid + 1, high)
    return low


def _about(n: int) -> str:
    return f"{n:,}" if n < 100 else f"{round(n, -len(str(n)) + 2):,}"


def evidence_summary(cells: Sequence[CellVerdict], margin: float) -> str:
    """`0 regressed, 41 shown within 5 points, 7 not enough evidence (need about 140 more runs each)`."""
    regressed = sum(c.failed for c in cells)
    passed = [c for c in cells if not c.failed]
    if margin <= 0:
        return f"{regressed} regressed, {len(passed)} passed (no margin set: a pass means not shown worse)"
    short = [c for c in passed if not c.within_margin]
    text = f"{regressed} regressed, {len(passed) - len(short)} shown within {round(margin * 100):g} points"
    if not short:
        return text
    more = [max(0, c.need_runs - min(c.baseline.n, c.candidate.n)) for c in short if c.need_runs is not None]
    need = f"need about {_about(max(more))} more runs each" if more else "out of reach at the observed rates"
    if more and len(more) < len(short):
        need += f"; {len(short) - len(more)} out of reach at the observed rates"
    return f"{text}, {len(short)} not enough evidence ({need})"
