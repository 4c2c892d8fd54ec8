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
is Boschloo's (or Fisher's). Boschloo's p of one table is exact up to 1,000 runs a side; above, it
is Fisher's mid-p and the cell's test is named "mid-p (Boschloo approximated)". A cell that cannot
be compared is not judged, and said so (`evalkit.gate.accounting`). Differences are shown with a 1 −
2α Newcombe interval: the two-sided interval that matches a one-sided test at α.

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
from evalkit.gate.accounting import CellId, first_reason, infra_reason, partial_reasons
from evalkit.gate.config import GateConfig
from evalkit.gate.evidence import runs_needed, within
from evalkit.gate.family import adjust, floor_notes, pts_abs
from evalkit.gate.match import Matched, check_infra, match_runs, scenario_mismatch
from evalkit.gate.outcome import CellVerdict, GateResult, PooledVerdict
from evalkit.gate.power_notes import power_notes
from evalkit.gate.stratify import stratified_tests
from evalkit.results.records import Results, RunRecord
from evalkit.stats.exact import boschloo_one
from evalkit.stats.gate_power import GateTest
from evalkit.stats.intervals import fisher, floor_pvalue, mcnemar, newcombe
from evalkit.stats.margin import fm_pvalue, tango_pvalue
from evalkit.stats.rates import Rate, rate

__all__ = ["compare"]

Key = tuple[str, ...]


def _key(run: RunRecord, config: GateConfig) -> Key:
    c = run.cell
    extra = {"cell": (), "family": (c.family,), "scenario": (c.family, c.scenario)}[config.level]
    return (c.backend, c.mode, c.strategy, *extra) + ((c.model,) if config.match_model else ())


def _name(key: Key, config: GateConfig) -> str:
    parts = key[:-1] if config.match_model else key
    return "/".join(parts[:3] + parts[4:] if config.level == "scenario" else parts)


def _group(results: Results, config: GateConfig) -> dict[Key, list[RunRecord]]:
    groups: dict[Key, list[RunRecord]] = defaultdict(list)
    for run in results.runs:
        groups[_key(run, config)].append(run)
    return groups


def _check_sides(base: dict[Key, list[RunRecord]], cand: dict[Key, list[RunRecord]]) -> None:
    if not base or not cand:
        raise GateInputError(f"the {'baseline' if not base else 'candidate'} has no runs")


def _test(m: Matched, b: Rate, c: Rate, config: GateConfig) -> tuple[str, float, GateTest]:
    """(the label printed, the one-sided p, which test that is)."""
    d = config.margin
    if m.paired:
        lost = sum(x and not y for x, y in zip(m.base_outcomes, m.cand_outcomes, strict=True))
        gained = sum(y and not x for x, y in zip(m.base_outcomes, m.cand_outcomes, strict=True))
        if d > 0:
            label = f"Tango score, paired, margin {pts_abs(d)} pts ({lost} lost, {gained} gained)"
            return label, tango_pvalue(lost, gained, len(m.base_outcomes), d), "tango"
        return f"McNemar exact, paired ({lost} lost, {gained} gained)", mcnemar(lost, gained), "mcnemar"
    if d > 0:
        return f"Farrington–Manning score, margin {pts_abs(d)} pts", fm_pvalue(b.x, b.n, c.x, c.n, d), "fm"
    if config.test == "fisher":
        return "Fisher exact", fisher(b.x, b.n, c.x, c.n), "fisher"
    p, is_exact = boschloo_one(b.x, b.n, c.x, c.n)
    return ("Boschloo exact" if is_exact else "mid-p (Boschloo approximated)"), p, "boschloo"


def _worst_scenarios(m: Matched, limit: int = 3) -> tuple[str, ...]:
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for side, runs, outcomes in ((0, m.base, m.base_outcomes), (2, m.cand, m.cand_outcomes)):
        for run, ok in zip(runs, outcomes, strict=True):
            tallies[run.cell.scenario][side] += ok
            tallies[run.cell.scenario][side + 1] += 1
    drops = sorted(((bx / bn - cx / cn, s) for s, (bx, bn, cx, cn) in tallies.items()), reverse=True)
    return tuple(
        f"{s} {tallies[s][0]}/{tallies[s][1]} → {tallies[s][2]}/{tallies[s][3]}"
        for drop, s in drops[:limit]
        if drop > 0
    )


def _verdict(key: Key, m: Matched, config: GateConfig) -> CellVerdict:
    b = rate(sum(m.base_outcomes), len(m.base_outcomes))
    c = rate(sum(m.cand_outcomes), len(m.cand_outcomes))
    assert b is not None and c is not None  # match_runs returns counted runs on both sides
    test, p, kind = _test(m, b, c, config)
    floors = [f for f in {config.floor_for(r.cell) for r in m.cand} if f is not None]
    floor = max(floors, default=None)  # pooled cells: the strictest
    floor_p = None if floor is None else floor_pvalue(c.x, c.n, floor)
    scenario = key[4] if config.level == "scenario" else ""
    family = key[3] if config.level != "cell" else ""
    confidence = 1 - 2 * config.alpha
    worst = _worst_scenarios(m) if config.level != "scenario" else ()
    difference = newcombe(c.x, c.n, b.x, b.n, confidence)
    return CellVerdict(
        key[0],
        key[1],
        key[2],
        family,
        scenario,
        (m.base[0].cell.model, m.cand[0].cell.model),
        config.metric,
        b,
        c,
        difference,
        confidence,
        test,
        p,
        p,
        floor,
        floor_p,
        floor_p,
        (),
        worst,
        config.margin,
        within(difference, config.margin),
        None if within(difference, config.margin) else runs_needed(b, c, config.margin, confidence),
        kind,
    )


def _model_notes(verdicts: Sequence[CellVerdict]) -> list[str]:
    return sorted(
        {f"model changed: {v.models[0]} → {v.models[1]} ({v.backend})" for v in verdicts if v.models[0] != v.models[1]}
    )


UNSUPPORTED = "unsupported on both sides"
Partial = dict[str, dict[CellId, str]]


def _not_judged(key: Key, base: list[RunRecord], cand: list[RunRecord], config: GateConfig, partial: Partial) -> str:
    """Why the cell cannot be judged, or "" when it can."""
    if not base or not cand:
        return "missing in the candidate" if base else "not in the baseline"
    for side, runs in (("baseline", base), ("candidate", cand)):
        why = infra_reason(runs, side, config.max_infra_error_rate) or first_reason(runs, partial[side])
        if why:
            return why
    if config.level != "scenario":
        return scenario_mismatch(base, cand) or ""
    return ""


def _compare_cell(
    key: Key, base: list[RunRecord], cand: list[RunRecord], config: GateConfig, notes: list[str], partial: Partial
) -> CellVerdict | tuple[str, bool]:
    """A verdict, or (why the cell was not compared, whether that leaves it unjudged)."""
    name = _name(key, config)
    unsupported = [bool(runs) and all(r.outcome == "unsupported" for r in runs) for runs in (base, cand)]
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
    return _verdict(key, matched, config)


def compare(baseline: Results, candidate: Results, config: GateConfig | None = None) -> GateResult:
    """Judge every cell either side holds; raises GateInputError when the inputs cannot be compared
    at all (a side without runs, a strategy column over the infra limit)."""
    config = config or GateConfig()
    base, cand = _group(baseline, config), _group(candidate, config)
    _check_sides(base, cand)
    check_infra(baseline.runs, "baseline", config)
    check_infra(candidate.runs, "candidate", config)
    partial = {"baseline": partial_reasons(baseline, "baseline"), "candidate": partial_reasons(candidate, "candidate")}
    verdicts: list[CellVerdict] = []
    skipped: list[tuple[str, str]] = []
    unjudged: list[tuple[str, str]] = []
    notes: list[str] = []
    for key in sorted(base.keys() | cand.keys()):
        outcome = _compare_cell(key, base.get(key, []), cand.get(key, []), config, notes, partial)
        if isinstance(outcome, CellVerdict):
            verdicts.append(outcome)
        else:
            (unjudged if outcome[1] else skipped).append((_name(key, config), outcome[0]))
    strata = stratified_tests(verdicts, 1 - 2 * config.alpha) if config.stratified and not config.margin else []
    final, pooled_holm = adjust(verdicts, config.alpha, config.margin, [r.p for _, _, r in strata])
    pooled = tuple(
        PooledVerdict(name, cells, r, p, config.alpha) for (name, cells, r), p in zip(strata, pooled_holm, strict=True)
    )
    floors, warnings = floor_notes(final, config.alpha)
    if config.stratified and config.margin:
        warnings.append("--stratified is not run with --margin: the Cochran–Mantel–Haenszel test has no margin")
    notes = _model_notes(final) + notes + floors + power_notes(final, config, len(pooled))
    return GateResult(
        tuple(final),
        tuple(skipped),
        tuple(notes),
        tuple(warnings),
        config.alpha,
        config.level,
        config.metric,
        baseline.simulated or candidate.simulated,
        tuple(unjudged),
        config.allow_unjudged,
        config.margin,
        config.require_evidence,
        pooled,
    )
