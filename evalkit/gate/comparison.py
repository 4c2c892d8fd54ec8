"""The CI regression gate: does a candidate's results file fall short of a baseline's?

The gate judges `correct` (the check passed) by default; `metric: completed` judges the structural
rate instead. Its unit is the scenario (`level: scenario`, the default): one cell per backend label,
tool mode, strategy and scenario, Holm-adjusted across all of them, so one workflow that collapses
is not hidden by gains elsewhere (pooling hid `max_retries: 1`, which halves one workflow scenario
while the greetings gain). `level: family` and `level: cell` pool the scenarios of a family or of a
whole strategy column, which shows a broad small drop that no single scenario proves. The model is
not part of the match unless `match_model` is set; a model change is printed as a note.

Runs are compared like with like. When every run pairs up by scenario, run index and seed, only the
pairs counted on both sides are kept (an infra error on one side drops its pair) and the test is
McNemar's. Otherwise a pooled cell keeps, per scenario, the same number of counted runs on both
sides (the first by index), so infra errors cannot change a pooled cell's mix of scenarios; the test
is Boschloo's (or Fisher's); with a margin, Chan's exact test (unpaired) or the exact test on
Tango's statistic (paired). The cell's test comes from the registry (`evalkit.stats.gate_tests.
select`): exact up to 1,000 runs a side, and above, the exact test and its score test together. A
cell that cannot be compared is not judged, and said so (`evalkit.gate.accounting`). Differences are
shown with the 1 − 2α interval that inverts the cell's own test (paired for paired cells), so it
agrees with the verdict.

A cell fails when its rate dropped (one-sided exact test, Holm across all compared cells, at α) or
when it is significantly under its floor (`floor`, or per-cell `floors`): a one-sided exact binomial
test of "rate ≥ floor", in the same Holm family as the drop tests (`evalkit.gate.family`), so a cell
whose true rate equals its floor fails with probability at most α. Unusable input raises
`GateInputError` (exit 2).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from evalkit.errors import GateInputError
from evalkit.gate.accounting import (
    MISSING_IN_CANDIDATE,
    NOT_IN_BASELINE,
    CellId,
    config_warning,
    first_reason,
    infra_reason,
    partial_reasons,
)
from evalkit.gate.config import GateConfig
from evalkit.gate.evidence import runs_to_show
from evalkit.gate.family import HolmFamily, floor_notes
from evalkit.gate.match import Matched, check_infra, match_runs, scenario_mismatch
from evalkit.gate.outcome import CellMeasurement, CellVerdict, GateResult, PooledVerdict
from evalkit.gate.power_notes import power_notes
from evalkit.gate.stratify import stratified_tests
from evalkit.results.records import Cell
from evalkit.results.runs import Results, RunRow
from evalkit.results.table import group_runs
from evalkit.stats.gate_tests import Counts, select
from evalkit.stats.pvalues import floor_pvalue
from evalkit.stats.rates import rate

__all__ = ["compare"]

Key = tuple[str, ...]


def _key(c: Cell, config: GateConfig) -> Key:
    extra = {"cell": (), "family": (c.family,), "scenario": (c.family, c.scenario)}[config.level]
    return (c.backend, c.mode, c.strategy, *extra) + ((c.model,) if config.match_model else ())


def _name(key: Key, config: GateConfig) -> str:
    parts = key[:-1] if config.match_model else key
    # a scenario cell's name leaves its family out: the scenario names it alone
    return "/".join(parts[:3] + parts[4:] if config.level == "scenario" else parts)


def _group(results: Results[RunRow], config: GateConfig) -> dict[Key, Sequence[RunRow]]:
    return group_runs(results.runs, lambda cell: (_key(cell, config),))


def _check_sides(base: dict[Key, Sequence[RunRow]], cand: dict[Key, Sequence[RunRow]]) -> None:
    if not base or not cand:
        raise GateInputError(f"the {'baseline' if not base else 'candidate'} has no runs")


def _counts(m: Matched) -> Counts:
    # paired tests read only the discordant pairs: lost (baseline passed, candidate failed) and gained
    pairs = list(zip(m.base_outcomes, m.cand_outcomes, strict=True)) if m.paired else []
    return Counts(
        sum(m.base_outcomes),
        len(m.base_outcomes),
        sum(m.cand_outcomes),
        len(m.cand_outcomes),
        lost=sum(x and not y for x, y in pairs),
        gained=sum(y and not x for x, y in pairs),
        paired=m.paired,
    )


def _worst_scenarios(m: Matched, limit: int = 3) -> tuple[str, ...]:
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for side, runs, outcomes in ((0, m.base, m.base_outcomes), (2, m.cand, m.cand_outcomes)):
        for run, ok in zip(runs, outcomes, strict=True):
            tallies[run.cell.scenario][side] += ok
            tallies[run.cell.scenario][side + 1] += 1
    # the scenarios a pooled drop comes from, largest first: where a reader looks next
    drops = sorted(((bx / bn - cx / cn, s) for s, (bx, bn, cx, cn) in tallies.items()), reverse=True)
    return tuple(
        f"{s} {tallies[s][0]}/{tallies[s][1]} → {tallies[s][2]}/{tallies[s][3]}"
        for drop, s in drops[:limit]
        if drop > 0
    )


def _measure(key: Key, m: Matched, config: GateConfig) -> CellMeasurement:
    """The cell's measurement: everything of its verdict but the Holm-adjusted p-values."""
    counts = _counts(m)
    b, c = rate(counts.base_x, counts.base_n), rate(counts.cand_x, counts.cand_n)
    assert b is not None and c is not None  # match_runs returns counted runs on both sides
    test = select(counts.paired, config.margin, config.test, counts.base_n, counts.cand_n)
    floors = [f for f in {config.floor_for(r.cell) for r in m.cand} if f is not None]
    floor = max(floors, default=None)  # pooled cells: the strictest
    # a one-sided test at α inverts to a two-sided interval at 1 − 2α
    confidence = 1 - 2 * config.alpha
    within = config.margin > 0 and test.within_pvalue(counts, config.margin) <= config.alpha
    return CellMeasurement(
        backend=key[0],
        mode=key[1],
        strategy=key[2],
        family=key[3] if config.level != "cell" else "",
        scenario=key[4] if config.level == "scenario" else "",
        models=(m.base[0].cell.model, m.cand[0].cell.model),
        metric=config.metric,
        baseline=b,
        candidate=c,
        counts=counts,
        kind=test.kind,
        test=test.describe(counts, config.margin),
        p=test.pvalue(counts, config.margin),
        alpha=config.alpha,
        difference=test.interval(counts, config.margin, config.alpha),
        confidence=confidence,
        margin=config.margin,
        within_margin=within,
        need_runs=None if within or config.margin <= 0 else runs_to_show(b, counts.paired, config),
        floor=floor,
        floor_p=None if floor is None else floor_pvalue(c.x, c.n, floor),
        worst=_worst_scenarios(m) if config.level != "scenario" else (),
    )


def _model_notes(verdicts: Sequence[CellVerdict]) -> list[str]:
    return sorted(
        {f"model changed: {v.models[0]} → {v.models[1]} ({v.backend})" for v in verdicts if v.models[0] != v.models[1]}
    )


UNSUPPORTED = "unsupported on both sides"
Partial = dict[str, dict[CellId, str]]


def _not_judged(key: Key, base: Sequence[RunRow], cand: Sequence[RunRow], config: GateConfig, partial: Partial) -> str:
    """Why the cell cannot be judged, or "" when it can."""
    if not base or not cand:
        return MISSING_IN_CANDIDATE if base else NOT_IN_BASELINE
    for side, runs in (("baseline", base), ("candidate", cand)):
        why = infra_reason(runs, side, config.max_infra_error_rate) or first_reason(runs, partial[side])
        if why:
            return why
    if config.level != "scenario":
        return scenario_mismatch(base, cand) or ""
    return ""


def _compare_cell(
    key: Key,
    base: Sequence[RunRow],
    cand: Sequence[RunRow],
    config: GateConfig,
    notes: list[str],
    partial: Partial,
) -> CellMeasurement | tuple[str, bool]:
    """The cell's measured fields, or (why the cell was not compared, whether that leaves it unjudged)."""
    name = _name(key, config)
    unsupported = [bool(runs) and all(r.outcome == "unsupported" for r in runs) for runs in (base, cand)]
    # unsupported on both sides is the setup, not a hole in the evidence: skipped, not unjudged
    if all(unsupported):
        return UNSUPPORTED, False
    if any(unsupported):
        side = "baseline" if unsupported[0] else "candidate"
        return f"unsupported in the {side} only; the two sides ran different setups", True
    why = _not_judged(key, base, cand, config, partial)
    if why:
        return why, True
    matched = match_runs(name, base, cand, config, pooled=config.level != "scenario")
    notes += matched.notes
    if not matched.base:
        return matched.why_empty, True
    return _measure(key, matched, config)


def compare(baseline: Results[RunRow], candidate: Results[RunRow], config: GateConfig | None = None) -> GateResult:
    """Judge every cell either side holds; raises GateInputError when the inputs cannot be compared
    at all (a side without runs, a strategy column over the infra limit)."""
    config = config or GateConfig()
    base, cand = _group(baseline, config), _group(candidate, config)
    _check_sides(base, cand)
    check_infra(baseline.runs, "baseline", config)
    check_infra(candidate.runs, "candidate", config)
    partial = {"baseline": partial_reasons(baseline, "baseline"), "candidate": partial_reasons(candidate, "candidate")}
    measured: list[CellMeasurement] = []
    skipped: list[tuple[str, str]] = []
    unjudged: list[tuple[str, str]] = []
    notes: list[str] = []
    for key in sorted(base.keys() | cand.keys()):
        outcome = _compare_cell(key, base.get(key, []), cand.get(key, []), config, notes, partial)
        if isinstance(outcome, CellMeasurement):
            measured.append(outcome)
        else:
            (unjudged if outcome[1] else skipped).append((_name(key, config), outcome[0]))
    # Cochran–Mantel–Haenszel tests a drop of zero; with a margin the strata have no test to pool
    strata = (
        stratified_tests([(m.family, m.scenario, m.baseline, m.candidate) for m in measured], 1 - 2 * config.alpha)
        if config.stratified and not config.margin
        else []
    )
    # one Holm family over every test the verdict rests on, so adding cells never loosens one
    holm = HolmFamily([m.p for m in measured], [m.floor_p for m in measured], [r.p for _, _, r in strata])
    final = [m.judged(p, floor_p) for m, p, floor_p in zip(measured, holm.drops, holm.floors, strict=True)]
    pooled = tuple(
        PooledVerdict(name, cells, r, p, config.alpha) for (name, cells, r), p in zip(strata, holm.pooled, strict=True)
    )
    floors, warnings = floor_notes(final, config.alpha, len(pooled))
    differs = config_warning(baseline, candidate, unjudged)
    warnings = ([differs] if differs else []) + warnings
    if config.stratified and config.margin:
        warnings.append("--stratified is not run with --margin: the Cochran–Mantel–Haenszel test has no margin")
    notes = _model_notes(final) + notes + floors + power_notes(final, config, len(pooled))
    return GateResult(
        cells=tuple(final),
        skipped=tuple(skipped),
        notes=tuple(notes),
        warnings=tuple(warnings),
        alpha=config.alpha,
        level=config.level,
        metric=config.metric,
        simulated=baseline.simulated or candidate.simulated,
        unjudged=tuple(unjudged),
        allow_unjudged=config.allow_unjudged,
        margin=config.margin,
        require_evidence=config.require_evidence,
        pooled=pooled,
        configs_differ=differs is not None,
    )
