"""How the report writes a number: percentages, intervals, p-values, cost, the cells of the published
and BFCL tables. Plain strings, shared by the HTML renderer (as jinja2 filters) and the markdown one,
which therefore needs no template engine."""

from __future__ import annotations

import math

from evalkit.report.bfcl_table import BfclEntry
from evalkit.report.cells import Cost
from evalkit.stats.rates import Rate

__all__ = [
    "bfcl_notes",
    "bfcl_value",
    "calls_text",
    "cost_text",
    "interval",
    "pct",
    "pvalue",
    "rate_colour",
    "side_calls",
    "signed",
    "table_value",
]


def pct(value: float | None, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{value * 100:.{digits}f}%"


def interval(rate: Rate | None) -> str:
    return "" if rate is None else f"[{rate.low * 100:.0f}–{rate.high * 100:.0f}]"


def rate_colour(rate: Rate | None) -> str:
    """Red (0%) through yellow to green (100%), light enough for dark text."""
    if rate is None:
        return "#eeeeee"
    # hue 0 is red and 120 green; one lightness for every cell keeps the text equally readable
    return f"hsl({rate.value * 120:.0f}, 70%, 82%)"


def table_value(value: float | Rate | None, published: bool = True) -> str:
    """A cell of the published-beside-measured table: a typed-in rate, or a measured one with its interval."""
    if value is None:
        return "not measured" if published else "no counted run"
    if isinstance(value, Rate):
        return f"{pct(value.value)} {interval(value)} {value.x}/{value.n}"
    return pct(value)


def _share(x: int, n: int) -> str:
    return f"{pct(x / n)} ({x}/{n})" if n else "no counted run"


def bfcl_value(entry: BfclEntry | None, checker: str, missing: str | None = None) -> str:
    """A cell of the BFCL score table: the accuracy by `checker` ("evalkit" or "bfcl") of one category."""
    if entry is None:
        return "–"
    if checker == "evalkit":
        return _share(entry.evalkit_correct, entry.evalkit_counted)
    if entry.bfcl_correct is None or entry.bfcl_judged is None:
        return missing or "not judged"
    return _share(entry.bfcl_correct, entry.bfcl_judged)


def bfcl_notes(entry: BfclEntry | None) -> str:
    """What a BFCL score cell's accuracies leave out: verdicts that differ, runs BFCL could not judge."""
    if entry is None:
        return ""
    notes = [f"{entry.disagree} disagree"] if entry.disagree else []
    if entry.not_judged:
        reasons = ", ".join(f"{n} {why}" for why, n in entry.not_judged)
        notes.append(f"{entry.not_judged_total} not judged by BFCL ({reasons})")
    return "; ".join(notes)


def cost_text(cost: Cost | None) -> str:
    if cost is None:
        return ""
    return (
        f"; latency median {cost.latency_median_s:.1f}s, p90 {cost.latency_p90_s:.1f}s; "
        f"{cost.tokens_mean:.0f} tokens, {calls_text(cost)} ({cost.wasted_calls_mean:.1f} wasted) per run"
    )


def calls_text(cost: Cost) -> str:
    """Model calls per run: "4.0 model calls served (1.0 seen)" where a model server counted its own."""
    if not cost.served_runs:
        return f"{cost.model_calls_mean:.1f} model calls"
    return f"{cost.model_calls_mean:.1f} model calls served ({cost.calls_seen_mean:.1f} seen)"


def side_calls(served: float | None, seen: float | None) -> str:
    """Model calls per run on one side of a side-by-side line: served, and seen where they differ."""
    if served is None:
        return "–"
    # equal to the printed digit: a second number that reads the same would only add noise
    if seen is None or abs(served - seen) < 0.05:
        return f"{served:.1f}"
    return f"{served:.1f} ({seen:.1f} seen)"


def pvalue(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def signed(value: float) -> str:
    points = round(value * 100)
    return f"{points:+d}" if points else "0"  # never "-0"
