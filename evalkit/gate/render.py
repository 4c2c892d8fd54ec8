"""What the gate says: the terminal text, a markdown summary and JUnit XML, for every way it ends.

Exit 0 and 1 describe the cells; exit 2 (unusable input) writes the same files with the reason,
so a CI step that publishes them never finds them missing or stale.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING
from xml.etree import ElementTree as ET

from evalkit.gate.accounting import unpaired_summary
from evalkit.gate.evidence import evidence_summary, need_text
from evalkit.gate.family import family_size
from evalkit.gate.outcome import CellVerdict, GateResult, pts, pts_abs
from evalkit.results.escaping import markdown_cell, one_line, plural, xml_text

if TYPE_CHECKING:
    from evalkit.gate.sequential import SequentialCell, SequentialResult

__all__ = [
    "SIMULATED",
    "error_junit",
    "error_markdown",
    "junit_suite",
    "md",
    "render_junit",
    "render_markdown",
    "render_sequential",
    "render_text",
    "sequential_junit",
    "sequential_markdown",
    "unjudged_cases",
    "unjudged_lines",
    "verdict_word",
]

SIMULATED = "SIMULATED results: at least one side comes from the simulated backend, not a real model."


def md(text: str) -> str:
    """Text inside a markdown table cell or list item (`evalkit.results.escaping.markdown_cell`)."""
    return markdown_cell(text)


def verdict_word(failed: bool, unjudged: int, allowed: bool) -> str:
    # a regression is said first, whatever else holds: it is the news a CI log must not bury
    if failed:
        return "FAIL"
    if unjudged and not allowed:
        return "NOT JUDGED"
    return "PASS"


def _unjudged_part(unjudged: int, allowed: bool) -> str:
    if not unjudged:
        return ""
    return f", {unjudged} not judged" + (" (allowed by --allow-unjudged)" if allowed else "")


def _family(result: GateResult) -> str:
    tests = family_size(result.cells, len(result.pooled))
    if tests == len(result.cells):
        return f"Holm across {plural(tests, 'cell')}"
    return f"one Holm family of {plural(tests, 'test')} over {plural(len(result.cells), 'cell')}"


def _article(points: int) -> str:
    # "an" before the numbers read aloud with a vowel: 8, 11, 18, 80-89
    return "an" if str(points).startswith("8") or points in (11, 18) else "a"


def _stratified_part(result: GateResult) -> str:
    """The stratified test that failed, named first: a cell-by-cell tally alone would read as a pass."""
    if not result.failed_pooled:
        return ""
    p = result.failed_pooled[0]
    points = abs(round(p.result.difference * 100))
    where = "cells" if p.name == "all cells" else f"cells of {p.name}"
    return (
        f"stratified test: {_article(points)} {points}-point drop across {p.cells} {where} "
        f"(exact conditional p = {p.result.p:.4g}, Holm {p.p_holm:.4g}); cells: "
    )


def _headline(result: GateResult) -> str:
    verdict = verdict_word(result.regressed, len(result.unjudged), result.allow_unjudged)
    # with --require-evidence a pass that was not shown within the margin is no pass
    if verdict == "PASS" and result.require_evidence and result.short_of_evidence:
        verdict = "NOT ENOUGH EVIDENCE"
    return (
        f"evalkit gate: {verdict} — {_stratified_part(result)}{evidence_summary(result.cells, result.margin)}"
        f"{_unjudged_part(len(result.unjudged), result.allow_unjudged)} "
        f"(metric {result.metric}; level {result.level}; α = {result.alpha}, {_family(result)})"
    )


def _cell_line(v: CellVerdict) -> str:
    return (
        f"{v.name}: {v.metric} {v.baseline.x}/{v.baseline.n} → {v.candidate.x}/{v.candidate.n} "
        f"({pts(v.difference.estimate)} pts), {v.test} p = {v.p:.4f}, Holm {v.p_holm:.4f}"
    )


def _skipped_lines(result: GateResult) -> list[str]:
    """Cells not compared, grouped by reason (a whole unsupported column is one line, not 17)."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for name, why in result.skipped:
        by_reason[why].append(name)
    return [
        f"not compared ({why}): " + ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        for why, names in by_reason.items()
    ]


def unjudged_lines(unjudged: tuple[tuple[str, str], ...]) -> list[str]:
    """Every cell not judged, by name, with its reason (never folded: each one is a hole in the PASS)."""
    return [f"not judged: {name}: {why}" for name, why in unjudged]


def pooled_lines(result: GateResult) -> list[str]:
    """The stratified tests: the Mantel–Haenszel difference with its interval, and the verdict."""
    return [
        f"{'FAIL' if p.failed else 'pass'} stratified, {p.name} ({p.cells} cells): Mantel–Haenszel change "
        f"{pts(p.result.difference)} pts, {1 - 2 * result.alpha:.0%} CI [{pts(p.result.low)}, {pts(p.result.high)}]; "
        f"one-sided exact conditional p (Cochran–Mantel–Haenszel statistic) = {p.result.p:.4g}, Holm {p.p_holm:.4g}"
        for p in result.pooled
    ]


def _unjudged_text(result: GateResult, verbose: bool) -> list[str]:
    """Each cell not judged with its reason; across two configs (unless `verbose`) the cells only one
    side ran are one line per side: they are the configs' difference, hundreds of lines of it."""
    if verbose or not result.configs_differ:
        return unjudged_lines(result.unjudged)
    kept, summed = unpaired_summary(result.unjudged)
    return unjudged_lines(tuple(kept)) + [f"not judged: {line} (-v lists each)" for line in summed]


def render_text(result: GateResult, *, verbose: bool = False) -> str:
    lines = [_headline(result), *_unjudged_text(result, verbose), *pooled_lines(result)]
    if result.simulated:
        lines.append(SIMULATED)
    lines += [f"warning: {w}" for w in result.warnings]
    lines += [f"note: {n}" for n in result.notes]
    # failed cells in full, passed ones only with -v: a gate of hundreds of cells stays readable
    for v in result.failed:
        lines.append(f"FAIL {v.name} ({v.where})")
        lines += [f"     - {reason}" for reason in v.reasons]
    if verbose:
        lines += [f"pass {_cell_line(v)}" for v in result.cells if not v.failed]
    # names are data: one line each, so a newline in a scenario id cannot forge a verdict line
    return "\n".join(one_line(line) for line in lines + _skipped_lines(result))


def _row(v: CellVerdict) -> str:
    d = v.difference
    model = v.models[1] if v.models[0] == v.models[1] else f"{v.models[0]} → {v.models[1]}"
    result = "**FAIL**: " + md("; ".join(v.reasons)) if v.failed else "pass"
    return (
        f"| {md(v.name)} | {md(v.family or 'all')} | {md(v.scenario or 'pooled')} | {md(model)} | "
        f"{v.baseline.x}/{v.baseline.n} ({v.baseline.value:.0%}) | {v.candidate.x}/{v.candidate.n} "
        f"({v.candidate.value:.0%}) | {pts(d.estimate)} pts [{pts(d.low)}, {pts(d.high)}] | {md(v.test)} | "
        f"{v.p:.4f} | {v.p_holm:.4f} | {'' if v.floor is None else f'{v.floor:.0%}'} | {result} |"
    )


def _evidence(v: CellVerdict) -> str:
    if v.margin <= 0:
        return "not shown worse"
    if v.within_margin:
        return f"shown within {pts_abs(v.margin)} points"
    return f"not enough evidence ({need_text(v.need_runs, v.margin, v.counts.paired)})"


def _passed_row(v: CellVerdict) -> str:
    d = v.difference
    return (
        f"| {md(v.name)} | {v.baseline.x}/{v.baseline.n} | {v.candidate.x}/{v.candidate.n} | "
        f"{pts(d.estimate)} [{pts(d.low)}, {pts(d.high)}] | {md(v.test)} | {v.p_holm:.3g} | {_evidence(v)} |"
    )


def _table_header(confidence: str) -> list[str]:
    return [
        f"| cell | family | scenario | model | baseline | candidate | change [{confidence} CI] | test | p "
        "| Holm p | floor | result |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]


def render_markdown(result: GateResult) -> str:
    """The verdict, then what needs a reader: regressed cells (full rows) and cells not judged; the
    passed cells, compact, folded in a <details> block (a CI step summary of 187 cells in full
    rows was 85 KB)."""
    lines = [f"## {md(_headline(result))}", ""]
    if result.simulated:
        lines += [f"> **{SIMULATED}**", ""]
    lines += _unjudged_markdown(result)
    confidence = f"{1 - 2 * result.alpha:.0%}"
    if result.failed:
        lines += ["**Regressed:**", "", *_table_header(confidence)]
        lines += [_row(v) for v in sorted(result.failed, key=lambda v: v.name)] + [""]
    lines += [f"- {md(line)}" for line in pooled_lines(result)]
    lines += [f"- **warning**: {md(w)}" for w in result.warnings]
    lines += [f"- {md(n)}" for n in result.notes]
    lines += [""] + [f"- {md(line)}" for line in _skipped_lines(result)] if result.skipped else []
    passed = [v for v in result.cells if not v.failed]
    if passed:
        lines += [
            "",
            f"<details><summary>{len(passed)} passed cells</summary>",
            "",
            f"| cell | baseline | candidate | change [{confidence} CI] | test | Holm p | evidence |",
            "|---|---|---|---|---|---|---|",
            *(_passed_row(v) for v in sorted(passed, key=lambda v: v.name)),
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


def _unjudged_markdown(result: GateResult) -> list[str]:
    """The cells not judged; across two configs the unpaired ones summed up, every cell folded below."""
    if not result.unjudged:
        return []
    every = [f"- {md(name)}: {md(why)}" for name, why in result.unjudged]
    lines = ["**Not judged** (each is a cell the verdict does not cover):", ""]
    if not result.configs_differ:
        return lines + every + [""]
    kept, summed = unpaired_summary(result.unjudged)
    lines += [f"- {md(name)}: {md(why)}" for name, why in kept] + [f"- {md(line)}" for line in summed]
    count = len(result.unjudged)
    return [*lines, "", f"<details><summary>{count} cells not judged</summary>", "", *every, "", "</details>", ""]


def junit_suite(name: str, simulated: bool) -> ET.Element:
    title = xml_text(one_line(name + (" (SIMULATED)" if simulated else "")))
    return ET.Element("testsuite", name=title, tests="0", failures="0", errors="0", skipped="0")


def junit_case(
    suite: ET.Element,
    name: str,
    *,
    failure: tuple[str, str] | None = None,
    skipped: str | None = None,
    kind: str = "regression",
    output: str | None = None,
) -> None:
    """Add a test case; `failure` is (message, detail); `output` goes to its system-out. Every text is
    made XML-safe here (names from results files may hold any character: an ESC byte made the file
    unparseable)."""
    name = xml_text(one_line(name))
    # backend.mode.strategy as the class: CI tools group the cases of one guard stack together
    case = ET.SubElement(
        suite, "testcase", classname="evalkit.gate." + ".".join(name.split("/")[:3]), name=name, time="0"
    )
    suite.set("tests", str(int(suite.get("tests", "0")) + 1))
    if failure is not None:
        # unusable input is an error of the gate, not a failed cell: CI tools show the two apart
        tag = "error" if kind == "input" else "failure"
        element = ET.SubElement(case, tag, message=xml_text(one_line(failure[0])), type=kind)
        element.text = xml_text(failure[1])
        counter = "errors" if tag == "error" else "failures"
        suite.set(counter, str(int(suite.get(counter, "0")) + 1))
    if skipped is not None:
        ET.SubElement(case, "skipped", message=xml_text(one_line(skipped)))
        suite.set("skipped", str(int(suite.get("skipped", "0")) + 1))
    if output is not None:
        ET.SubElement(case, "system-out").text = xml_text(output)


def junit_text(suite: ET.Element) -> str:
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render_junit(result: GateResult) -> str:
    """JUnit XML: one test case per cell, a failure element with the reasons for failed cells."""
    suite = junit_suite("evalkit gate", result.simulated)
    # by identity: two cells with equal fields are still two test cases
    short = set(map(id, result.short_of_evidence))
    for v in result.cells:
        if v.failed:
            junit_case(suite, v.name, failure=("; ".join(v.reasons), f"{_cell_line(v)} ({v.where})"))
        elif id(v) in short:
            evidence = _evidence(v)
            # short of evidence fails the case only when the gate was told to require evidence
            failure = (evidence, f"{_cell_line(v)} ({v.where})") if result.require_evidence else None
            junit_case(suite, v.name, failure=failure, kind="not enough evidence", output=evidence)
        else:
            junit_case(suite, v.name, output=_evidence(v) if v.margin > 0 else None)
    for name, why in result.skipped:
        junit_case(suite, name, skipped=why)
    unjudged_cases(suite, result.unjudged, result.allow_unjudged)
    return junit_text(suite)


def unjudged_cases(suite: ET.Element, unjudged: tuple[tuple[str, str], ...], allowed: bool) -> None:
    """A cell not judged is a failure of type "not judged" (skipped when --allow-unjudged)."""
    for name, why in unjudged:
        if allowed:
            junit_case(suite, name, skipped=f"not judged: {why}")
        else:
            junit_case(suite, name, failure=(f"not judged: {why}", f"{name}: not judged: {why}"), kind="not judged")


def error_markdown(message: str, *, sequential: bool = False) -> str:
    mode = " --sequential" if sequential else ""
    return (
        f"## evalkit gate{mode}: ERROR (exit 2): the inputs could not be compared\n\n"
        f"> {md(message)}\n\nNo verdict: fix the input and rerun the gate.\n"
    )


def error_junit(message: str) -> str:
    suite = junit_suite("evalkit gate", False)
    junit_case(suite, "evalkit gate input", failure=(message, "unusable input (exit 2): " + message), kind="input")
    return junit_text(suite)


# --- sequential mode -----------------------------------------------------------------------------


def _sequential_headline(result: SequentialResult) -> str:
    s = result.settings
    regressions = sum(c.regression for c in result.cells)
    verdict = verdict_word(result.failed, len(result.unjudged), result.allow_unjudged)
    unjudged = _unjudged_part(len(result.unjudged), result.allow_unjudged)
    return (
        f"evalkit gate --sequential: {verdict}: {regressions} of {len(result.cells)} "
        f"cells regressed against the baseline{unjudged} (metric {result.metric}; α = {result.alpha}, "
        f"{result.alpha_per_cell:.4g} per cell [Bonferroni]; fixed-N verdict at {s.max_runs} runs, curtailed; "
        f"futility {s.futility}); {result.runs_executed} runs in {result.batches} "
        f"batches of up to {s.batch} per cell"
    )


def _sequential_cell(c: SequentialCell, max_runs: int) -> str:
    fails = (
        f"{c.failures_to_fail} failures in {max_runs} runs would fail it"
        if c.failures_to_fail <= max_runs
        else "no result could fail it against this baseline"
    )
    return (
        f"{c.name}: {c.decision} after {c.runs_used} runs: {c.passes}/{c.runs_used} against the baseline's "
        f"{c.baseline[0]}/{c.baseline[1]} ({fails})"
    )


def render_sequential(result: SequentialResult) -> str:
    lines = [_sequential_headline(result), *unjudged_lines(result.unjudged)]
    if result.simulated:
        lines.append(SIMULATED)
    lines += [f"note: {n}" for n in result.notes]
    for c in result.cells:
        lines.append(
            f"{'FAIL' if c.regression else 'pass'} {_sequential_cell(c, result.settings.max_runs)}"
            + (f" ({c.where})" if c.regression else "")
        )
    return "\n".join(one_line(line) for line in lines)


def sequential_markdown(result: SequentialResult) -> str:
    lines = [f"## {md(_sequential_headline(result))}", ""]
    if result.simulated:
        lines += [f"> **{SIMULATED}**", ""]
    if result.unjudged:
        lines += ["**Not judged** (each is a cell the verdict does not cover):", ""]
        lines += [f"- {md(name)}: {md(why)}" for name, why in result.unjudged] + [""]
    lines += [f"- {md(n)}" for n in result.notes] + ([""] if result.notes else [])
    lines += [
        "| cell | family | model | verdict | runs | candidate | baseline | failures that fail it |",
        "|---|---|---|---|---|---|---|---|",
    ]
    # regressions first: the rows a reader opened the summary for
    for c in sorted(result.cells, key=lambda c: (not c.regression, c.name)):
        verdict = f"**FAIL**: {c.decision}" if c.regression else c.decision
        lines.append(
            f"| {md(c.name)} | {md(c.family)} | {md(c.model)} | {verdict} | {c.runs_used} | "
            f"{c.passes}/{c.runs_used} | {c.baseline[0]}/{c.baseline[1]} | {c.failures_to_fail} |"
        )
    return "\n".join(lines) + "\n"


def sequential_junit(result: SequentialResult) -> str:
    suite = junit_suite("evalkit gate --sequential", result.simulated)
    for c in result.cells:
        failure = (_sequential_cell(c, result.settings.max_runs), c.where) if c.regression else None
        junit_case(suite, c.name, failure=failure)
    unjudged_cases(suite, result.unjudged, result.allow_unjudged)
    return junit_text(suite)
