"""The plain-text summary `evalkit run` prints: `correct` per family and guard stack, from results.

One block per family (names in full), one line per backend · mode · strategy with N, the correct
rate x/N with its 95% Wilson interval, the completed rate (structural: the run ended the expected
way, whatever it said) and mean retries. Lines fit `width` columns; a label too long for its line
gets a line of its own. The report (`evalkit report`) has the comparisons, plots and transcripts.
"""

from __future__ import annotations

from collections import defaultdict

from evalkit.report.provenance import fitted_labels
from evalkit.report.restarts import phase_exits, summary_line
from evalkit.results.escaping import one_line
from evalkit.results.runs import Results, RunRow
from evalkit.stats.proportions import wilson

__all__ = ["WIDTH", "configured_order", "summary_table"]

WIDTH = 100


def configured_order(results: Results[RunRow]) -> tuple[list[str], list[str], list[str]]:
    """Backend labels, modes and strategy labels in the order the configs list them: rows and columns
    follow the config, not the order in which concurrent runs happened to finish."""
    backends: list[str] = []
    modes: list[str] = []
    strategies: list[str] = []
    # every header's lists, in order: a resume may have added a backend; `rank` takes the first place
    for header in results.headers:
        config = header.config
        backends += [str(b.get("label")) for b in config.get("backends", []) if isinstance(b, dict)]
        modes += [str(m) for m in config.get("modes", [])]
        strategies += [str(s) for s in config.get("strategies", {})]
    return backends, modes, strategies


def _column_order(results: Results[RunRow]) -> dict[tuple[str, str, str], tuple[int, int, int]]:
    backends, modes, strategies = configured_order(results)

    # a label no config lists (a merged file of other configs) goes after the listed ones
    def rank(order: list[str], value: str) -> int:
        return order.index(value) if value in order else len(order)

    cells = {(r.cell.backend, str(r.cell.mode), r.cell.strategy) for r in results.runs}
    return {c: (rank(backends, c[0]), rank(modes, c[1]), rank(strategies, c[2])) for c in cells}


def _stats(runs: list[RunRow]) -> str:
    counted = [r for r in runs if r.counted]
    if not counted:
        return "unsupported" if runs and all(r.outcome == "unsupported" for r in runs) else "no counted runs"
    n = len(counted)
    correct = sum(r.correct for r in counted)
    completed = sum(r.completed for r in counted) / n
    retries = sum(r.retries for r in counted) / n
    ci = wilson(correct, n)
    # infra errors are not in the rate: shown beside it, so a rate over few runs is read as such
    infra = sum(r.outcome == "infra_error" for r in runs)
    text = (
        f"{correct:>3}/{n:<3} {correct / n:>4.0%} [{ci.low * 100:3.0f}–{ci.high * 100:3.0f}]"
        f"  completed {completed:>4.0%}  r{retries:.1f}"
    )
    return text + (f"  +{infra} infra" if infra else "")


def _served(runs: list[RunRow]) -> str | None:
    """Model calls per run seen by evalkit against those the model server served (behind a guard proxy)."""
    served = [r.served.calls for r in runs if r.counted and r.served is not None]
    if not served:
        return None
    seen = sum(r.model_calls for r in runs if r.counted and r.served is not None) / len(served)
    return f"calls per run: {seen:.1f} seen, {sum(served) / len(served):.1f} served"


def _line(label: str, stats: str, label_width: int) -> str:
    if len(label) <= label_width:
        return f"  {label:<{label_width}}  {stats}"
    return f"  {label}\n  {'':<{label_width}}  {stats}"  # wrap rather than cut a name


def summary_table(results: Results[RunRow], width: int = WIDTH) -> str:
    """Blocks per family; lines per backend/mode/strategy: correct x/N [interval], completed, retries."""
    groups: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    order = _column_order(results)
    first_seen: dict[tuple[str, str, str], int] = {}
    for run in results.runs:  # the tie-break for labels no config lists
        first_seen.setdefault((run.cell.backend, str(run.cell.mode), run.cell.strategy), len(first_seen))
    keys = sorted(order, key=lambda k: (order[k], first_seen[k]))
    columns = [" · ".join(k) for k in keys]
    simulated: set[str] = set()
    for run in results.runs:
        column = f"{run.cell.backend} · {run.cell.mode} · {run.cell.strategy}"
        if run.simulated:
            simulated.add(column)
        groups[(run.cell.family, column)].append(run)
    # labels are config text: one line each, so a newline in a name cannot forge a row
    labels = {c: one_line(c) + (" [SIM]" if c in simulated else "") for c in columns}
    stats = {key: _stats(runs) for key, runs in groups.items()}
    stats_width = max((len(v) for v in stats.values()), default=0)
    # labels get what the statistics leave of the width; a longer one wraps onto its own line (`_line`)
    label_width = min(max((len(v) for v in labels.values()), default=10), width - 4 - stats_width)
    lines = []
    if simulated:
        lines.append("[SIM] marks SIMULATED results (the simulated backend, not a real model)")
        lines += [one_line(f"[SIM] {backend}: {label}") for backend, label in sorted(fitted_labels(results).items())]
    lines.append("correct x/N [95% Wilson interval]; completed = ended the expected way; r = mean retries")
    if any(r.served is not None for r in results.runs):
        lines.append("calls per run: seen by evalkit, and served by the model server behind a guard proxy")
    for family in sorted({family for family, _ in groups}):
        lines.append("")
        lines.append(one_line(family))
        for c in columns:
            if (family, c) in groups:
                lines.append(_line(labels[c], stats[(family, c)], label_width))
                served = _served(groups[(family, c)])
                lines += [f"  {'':<{label_width}}  {served}"] if served else []
    infra = sum(r.outcome == "infra_error" for r in results.runs)
    unsupported = sum(r.outcome == "unsupported" for r in results.runs)
    if infra or unsupported:
        lines.append(f"\nnot counted: {infra} infra_error, {unsupported} unsupported runs")
    exits = summary_line(phase_exits(results.runs))
    lines += [f"\n{exits}"] if exits else []
    return "\n".join(lines)
