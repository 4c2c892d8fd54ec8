"""What a passed cell shows with a margin: shown within it (the cell's test in the other direction
rejects at α: the lower end of its 1 − 2α interval is above −D), or not enough evidence, with the
runs per side at which an unchanged cell at its baseline rate is shown within the margin with 80%
probability: `evalkit.gate.plan.runs_to_show_within`, the one function behind every such figure
the gate and `plan` print (docs/gate.md, "Margin")."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.gate.config import GateConfig
from evalkit.gate.outcome import CellVerdict, pts_abs
from evalkit.gate.plan import runs_to_show_within
from evalkit.stats.rates import Rate

__all__ = ["evidence_summary", "runs_to_show"]


def runs_to_show(baseline: Rate, paired: bool, config: GateConfig) -> int | None:
    """Runs per side (pairs) at which an unchanged cell at the baseline's rate is shown within the
    margin with 80% probability (None: more than plan's limit)."""
    planned = runs_to_show_within(baseline.value, config.margin, config.alpha, paired=paired, test=config.test)
    return planned.runs


def need_text(runs: int | None, margin: float, paired: bool) -> str:
    """The one wording of the runs a cell short of evidence needs (terminal, markdown, JUnit)."""
    side = "pairs" if paired else "runs per side"
    if runs is None:
        return f"more than 20,000 {side} to show an unchanged cell within {pts_abs(margin)} points"
    return f"an unchanged cell is shown within {pts_abs(margin)} points with 80% probability at {runs:,} {side}"


def evidence_summary(cells: Sequence[CellVerdict], margin: float) -> str:
    """`0 regressed, 41 shown within 5 points, 7 not enough evidence (need up to … runs per side …)`."""
    failed = [c for c in cells if c.failed]
    # the test's name without its parenthesised details: one entry per test, however many cells used it
    tests = sorted({c.test.split(" (")[0] for c in failed if c.dropped})
    regressed = f"{len(failed)} regressed" + (f" ({'; '.join(tests)})" if tests else "")
    passed = [c for c in cells if not c.failed]
    if margin <= 0:
        return f"{regressed}, {len(passed)} passed (no margin set: a pass means not shown worse)"
    short = [c for c in passed if not c.within_margin]
    text = f"{regressed}, {len(passed) - len(short)} shown within {pts_abs(margin)} points"
    if not short:
        return text
    runs = [c.need_runs for c in short]
    known = [n for n in runs if n is not None]
    paired = all(c.counts.paired for c in short)
    # one cell past plan's limit makes the honest figure "more than the limit", not the others' largest
    most = None if len(known) < len(runs) else max(known)
    return f"{text}, {len(short)} not enough evidence (at their rates, {need_text(most, margin, paired)})"
