"""The plain-text summary `evalkit run` prints: completion per family × guard stack, from results.

A quick look only; the report (`evalkit report`) has the intervals and comparisons.
"""

from __future__ import annotations

from collections import defaultdict

from evalkit.results import Results, RunRecord

__all__ = ["summary_table"]


def _cell(runs: list[RunRecord]) -> str:
    counted = [r for r in runs if r.counted]
    if not counted:
        return "n/a" if runs and runs[0].outcome == "unsupported" else "-"
    completed = sum(r.completed for r in counted)
    retries = sum(r.retries for r in counted) / len(counted)
    return f"{completed / len(counted):4.0%} r{retries:.1f}"


def summary_table(results: Results) -> str:
    """Rows: family; columns: backend/mode/strategy. Each cell: completion rate and mean retries."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    columns: list[str] = []
    for run in results.runs:
        column = f"{run.cell.backend}/{run.cell.mode}/{run.cell.strategy}"
        if column not in columns:
            columns.append(column)
        groups[(run.cell.family, column)].append(run)
    families = sorted({family for family, _ in groups})
    width = max(12, *(len(c) for c in columns)) if columns else 12
    lines = []
    if results.simulated:
        lines.append("SIMULATED results (simulated backend; not a real model)")
    lines.append("completion rate (r = mean retries per run)")
    lines.append(f"{'column':{width}}  " + "  ".join(f"{f[:14]:>14}" for f in families))
    for column in columns:
        cells = "  ".join(f"{_cell(groups.get((f, column), [])):>14}" for f in families)
        lines.append(f"{column:{width}}  {cells}")
    infra = sum(r.outcome == "infra_error" for r in results.runs)
    unsupported = sum(r.outcome == "unsupported" for r in results.runs)
    if infra or unsupported:
        lines.append(f"not counted: {infra} infra_error, {unsupported} unsupported runs")
    return "\n".join(lines)
