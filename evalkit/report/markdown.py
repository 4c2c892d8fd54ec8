"""The markdown report: a compact summary for a CI step summary or a pull-request comment.

Family and overall rows only (the HTML report has the scenarios, plots and transcripts).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.report.bfcl_table import BfclScore
from evalkit.report.cells import CellStats
from evalkit.report.data import PublishedTable, ReportData
from evalkit.report.formats import bfcl_notes, bfcl_value, interval, pct, pvalue, side_calls, signed, table_value
from evalkit.report.provenance import BackendInfo
from evalkit.report.side_by_side import SideBySideLine
from evalkit.results.escaping import markdown_cell, plural

__all__ = ["cell_text", "render_markdown", "side_by_side_table"]

SIMULATED_NOTE = (
    "> **SIMULATED RESULTS.** Some or all runs come from evalkit's simulated backend; they do not "
    "describe any real model. Simulated columns are marked (SIM)."
)


def cell_text(stats: CellStats | None) -> str:
    """A matrix cell: correct x/n = rate [interval], completed rate (c), mean retries (r)."""
    if stats is None:
        return "–"
    if stats.correct is None or stats.completed is None:
        return "unsupported" if stats.fully_unsupported else "no counted runs"
    text = (
        f"{stats.correct.x}/{stats.correct.n} = {pct(stats.correct.value)} {interval(stats.correct)} "
        f"c{pct(stats.completed.value)} r{stats.retries_mean or 0:.1f}"
    )
    return text + (f" +{stats.infra_errors} infra" if stats.infra_errors else "")


def _matrix(data: ReportData) -> list[str]:
    """Transposed against the HTML matrix (one line per strategy column) so it fits a CI summary."""
    rows = [r for r in data.rows if r.kind != "scenario"]
    # every name comes from a results file, so from a user or a model: escaped, a "|" cannot add a column
    head = ["backend · model · mode", "strategy"] + [markdown_cell(r.label) for r in rows]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for column in data.columns:
        label = [markdown_cell(column.group + (" (SIM)" if column.simulated else "")), markdown_cell(column.strategy)]
        cells = [markdown_cell(cell_text(data.cell(row, column))) for row in rows]
        lines.append("| " + " | ".join(label + cells) + " |")
    return lines


def _served(data: ReportData) -> list[str]:
    """Cost per run where a model server behind a guard proxy counted what it served, beside what
    evalkit's client saw (all scenarios); nothing when no run was counted so."""
    # the overall row: cost per run over all scenarios, one line a column
    costs = [(c, s.cost) for c in data.columns if (s := data.cell(data.rows[0], c)) and s.cost]
    if not any(cost.served_runs for _, cost in costs):
        return []
    lines = [
        "Cost per run behind a guard proxy: model calls seen by evalkit and served by the model server, "
        "with the served tokens and latency:",
        "",
        "| backend · model · mode | strategy | calls seen | calls served | tokens | latency median |",
        "|---|---|---|---|---|---|",
    ]
    for column, cost in costs:
        if cost.served_runs:
            group = markdown_cell(column.group + (" (SIM)" if column.simulated else ""))
            calls = f"{cost.calls_seen_mean:.1f} | {cost.model_calls_mean:.1f}"
            lines.append(
                f"| {group} | {markdown_cell(column.strategy)} | {calls} | {cost.tokens_mean:.0f} "
                f"| {cost.latency_median_s:.2f} s |"
            )
    return [*lines, ""]


_COMPARED = {"strategy": "strategies", "model": "models"}


def _comparisons(data: ReportData) -> list[str]:
    significant = [c for c in data.comparisons if c.significant]
    lines = [
        f"{len(significant)} of {len(data.comparisons)} comparisons of correct rates (strategies within a "
        f"model, models within a strategy) differ after Holm's correction (α = {data.alpha}, two-sided)."
    ]
    # only the significant ones as rows: a CI summary has no room for every pair
    if significant:
        lines += [
            "",
            "| compared | shared | scope | A | B | A − B | interval | Holm p |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {_COMPARED[c.kind]} | {markdown_cell(c.group)} | {markdown_cell(c.scope)} | "
            f"{markdown_cell(c.a)} | {markdown_cell(c.b)} | "
            f"{signed(c.difference.estimate)} | [{signed(c.difference.low)}, {signed(c.difference.high)}] | "
            f"{pvalue(c.p_holm)} |"
            for c in significant
        ]
    return lines


def _provenance(data: ReportData) -> list[str]:
    p = data.provenance
    lines = [
        "- configs: "
        + ", ".join(
            markdown_cell(
                f"{s.config_name} ({s.config_hash}, evalkit {s.evalkit_version}, "
                f"git {s.git_sha or 'unknown'}, {s.started_at})"
            )
            for s in p.sources
        )
    ]
    backends = (f"{b.label}: {b.kind} {b.model}" + _phases(b) + _sim_mark(b) for b in p.backends)
    lines.append("- backends: " + ", ".join(markdown_cell(b) for b in backends))
    lines.append(f"- runs per cell: {', '.join(map(str, p.runs_per_cell))}; seeds: {', '.join(map(str, p.seeds))}")
    if p.stacks:
        lines.append("- guard stacks: " + "; ".join(markdown_cell(f"{label} = {text}") for label, text in p.stacks))
    if p.guards:
        lines.append("- guard code: " + "; ".join(markdown_cell(f"{name} = {text}") for name, text in p.guards))
    if data.generated_at:
        lines.append(f"- runs finished by {data.generated_at}")
    return lines


def _phases(b: BackendInfo) -> str:
    """The packages a backend's server phases ran (a guard proxy's version), in brackets."""
    ran = [f"{k.removesuffix(' phase')}: {v}" for k, v in b.essentials if k.endswith(" phase")]
    return f" ({'; '.join(ran)})" if ran else ""


def _not_counted(data: ReportData) -> str:
    infra, unsupported = plural(data.infra_errors, "infra-error run"), plural(data.unsupported, "unsupported run")
    exits = "".join(f" {markdown_cell(e.backend)}: {markdown_cell(e.text)}." for e in data.phase_restarts)
    return f"Not counted in rates: {infra}, {unsupported}.{exits}"


def _sim_mark(b: BackendInfo) -> str:
    return f" ({b.sim_label})" if b.fitted else " (SIM)" if b.simulated else ""


def _fitted_note(data: ReportData) -> list[str]:
    return [f"> {markdown_cell(b.label)}: {markdown_cell(b.sim_label)}." for b in data.provenance.backends if b.fitted]


def _published(table: PublishedTable) -> list[str]:
    lines = [
        f"**Published numbers beside measured ones.** Source: {markdown_cell(table.source)}. Rows marked "
        f"*published* are typed in from it, not measured here; below each, this report's pooled family cells "
        f"for the same guard stack ({table.metric} rate, interval, x/n).",
        "",
        "| row | " + " | ".join(markdown_cell(f) for f in table.families) + " |",
        "|---|" + "---|" * len(table.families),
    ]
    for row in table.rows:
        label = (
            ("*published* " if row.published else "") + markdown_cell(row.label) + (" (SIM)" if row.simulated else "")
        )
        lines.append(f"| {label} | " + " | ".join(table_value(v, row.published) for v in row.values) + " |")
    return lines


def _bfcl_score(score: BfclScore) -> list[str]:
    judge = f"bfcl-eval {score.bfcl_version}" if score.bfcl_version else score.bfcl_missing
    lines = [
        f"**BFCL score.** Per BFCL category, each column's accuracy by evalkit's checker and by BFCL's own "
        f"checker ({markdown_cell(judge or '')}) on the same final outputs, like a row of BFCL's leaderboard; the "
        "numbers are on this file's sample of each category, not BFCL's full category. *disagree*: runs the two "
        "checkers judged differently; runs BFCL's checker cannot judge are counted apart.",
        "",
        "| backend · model · mode · strategy | " + " | ".join(f"{c} (evalkit / BFCL)" for c in score.categories) + " |",
        "|---|" + "---|" * len(score.categories),
    ]
    for row in score.rows:
        cells = []
        for e in row.entries:
            notes = bfcl_notes(e)
            text = f"{bfcl_value(e, 'evalkit')} / {bfcl_value(e, 'bfcl', score.bfcl_missing)}" if e else "–"
            cells.append(markdown_cell(text + (f"; {notes}" if notes else "")))
        label = markdown_cell(row.label) + (" (SIM)" if row.simulated else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def side_by_side_table(lines: Sequence[SideBySideLine]) -> list[str]:
    """The config's `side_by_side` pairs per family: both rates, served calls, the difference and
    its two-sided exact test (Holm over the table). Also the Forge tables of docs/forge.md."""
    out = [
        "| claim | scope | left | correct | calls/run | right | correct | calls/run | left − right | p (Holm) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for line in lines:
        sides = []
        for side in (line.left, line.right):
            sim = " (SIM)" if side.simulated else ""
            sides.append(
                f"{markdown_cell(side.column + sim)} | {table_value(side.correct, published=False)} | "
                f"{side_calls(side.served_calls, side.seen_calls)}"
            )
        d = line.difference
        diff = f"{signed(d.estimate)} [{signed(d.low)}, {signed(d.high)}]" if d else "–"
        test = f"{pvalue(line.p)} ({pvalue(line.p_holm)})" if line.p is not None and line.p_holm is not None else "–"
        mark = " **differ**" if line.significant else ""
        claim = f"{markdown_cell(line.claim)} | {markdown_cell(line.scope)}"
        out.append(f"| {claim} | {sides[0]} | {sides[1]} | {diff} | {test}{mark} |")
    return out


def _side_by_side(data: ReportData) -> list[str]:
    if not data.side_by_side:
        return []
    tests = {line.test for line in data.side_by_side if line.test}
    return [
        "**Side by side** (pairs that claim the same behaviour; correct rate x/n with "
        f"{data.confidence:.0%} interval, model calls per run as the model server served them, the "
        f"difference in points with its Newcombe interval, two-sided {' / '.join(sorted(tests)) or 'exact'} "
        f"p-value and Holm's over the table, α = {data.alpha}):",
        "",
        *side_by_side_table(data.side_by_side),
        "",
    ]


def render_markdown(data: ReportData) -> str:
    lines = [f"# {markdown_cell(data.title)}{' (SIMULATED)' if data.all_simulated else ''}", ""]
    if data.simulated:
        lines += [SIMULATED_NOTE, *_fitted_note(data), ""]
    if data.incomplete:
        lines += [
            "**Incomplete results**: this file is not a finished run; its findings and comparisons are "
            "provisional (finish it with `evalkit run CONFIG --resume`).",
            "",
            *[f"- {markdown_cell(why)}" for why in data.incomplete],
            "",
        ]
    if data.published is not None:
        lines += [*_published(data.published), ""]
    if data.findings:
        lines += ["**Findings** (best stack per model and family by correct; one-sided Holm tests against it):", ""]
        lines += [f"- {markdown_cell(f.sentence)}" for f in data.findings] + [""]
    if data.bfcl_score is not None:
        lines += [*_bfcl_score(data.bfcl_score), ""]
    lines += [*_provenance(data), ""]
    lines += [
        f"{data.counted_runs} of {data.total_runs} runs counted. Correct rate x/n "
        f"[{data.confidence:.0%} {data.interval_method} interval], completed rate (c), mean retries (r):",
        "",
    ]
    lines += [*_matrix(data), "", *_served(data), *_side_by_side(data), *_comparisons(data), ""]
    if data.power is not None:
        lines += [f"**Power.** {data.power.summary}", ""]
    lines += [_not_counted(data), ""]
    return "\n".join(lines)
