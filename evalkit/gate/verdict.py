"""The CI regression gate: does a candidate's results file fall short of a baseline's?

The gate judges `correct` (the check passed) by default; `metric: completed` judges the structural
rate instead. Its unit is the scenario (`level: scenario`, the default): one cell per backend label,
tool mode, strategy and scenario, Holm-adjusted across all of them, so one workflow that collapses
is not hidden by gains elsewhere (pooling hid `max_retries: 1`, which halves one workflow scenario
while the greetings gain). `level: family` and `level: cell` pool the scenarios of a family or of
a whole strategy column, which shows a broad small drop that no single scenario proves. The model
is not part of the match unless `match_model` is set; a model change is printed as a note.

Runs are compared like with like. When every run pairs up by scenario, run index and seed, only
the pairs counted on both sides are kept (an infra error on one side drops its pair) and the test
is McNemar's. Otherwise a pooled cell keeps, per scenario, the same number of counted runs on both
sides (the first by index), so infra errors cannot change a pooled cell's mix of scenarios; the test
is Boschloo's (or Fisher's). Boschloo's p of one table is exact up to 1,000 runs a side; above, it
is Fisher's mid-p and the cell's test is named "mid-p (Boschloo approximated)". A scenario cell without counted runs on one side is not compared, and
said so. Differences are shown with a 1 − 2α Newcombe interval: the two-sided interval that matches
a one-sided test at α.

A cell fails when its rate dropped (one-sided exact test, Holm across all compared cells, at α) or
when it is significantly under its floor (`floor`, or per-cell `floors`): a one-sided exact binomial
test of "rate ≥ floor", Holm across the cells with a floor, so a cell whose true rate equals its
floor fails with probability at most α. Unusable input raises `GateInputError` (exit 2).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from evalkit.errors import GateInputError
from evalkit.gate.accounting import CellId, first_reason, infra_reason, partial_reasons
from evalkit.gate.config import GateConfig
from evalkit.gate.match import Matched, check_infra, match_runs, scenario_mismatch
from evalkit.report.cells import Rate, rate
from evalkit.results.records import Results, RunRecord
from evalkit.stats.exact import boschloo_one
from evalkit.stats.intervals import Difference, detectable_rate, fisher, floor_pvalue, holm, mcnemar, newcombe

__all__ = ["CellVerdict", "GateResult", "compare"]

Key = tuple[str, ...]


@dataclass(frozen=True)
class CellVerdict:
    backend: str
    mode: str
    strategy: str
    family: str  # "" when pooled over families (level cell)
    scenario: str  # "" when pooled over scenarios
    models: tuple[str, str]  # baseline, candidate
    metric: str
    baseline: Rate
    candidate: Rate
    difference: Difference  # candidate − baseline, Newcombe interval at `confidence`
    confidence: float
    test: str
    p: float
    p_holm: float
    floor: float | None
    floor_p: float | None  # one-sided exact binomial p of "rate ≥ floor"
    floor_p_holm: float | None
    reasons: tuple[str, ...]  # empty when the cell passes
    worst: tuple[str, ...] = ()  # pooled cells: the scenarios that lost the most runs

    @property
    def name(self) -> str:
        return "/".join(p for p in (self.backend, self.mode, self.strategy, self.scenario or self.family) if p)

    @property
    def where(self) -> str:
        """Every coordinate a reader needs to find the cell: family, scenario, model, strategy."""
        scenario = self.scenario or "all scenarios pooled"
        model = self.models[1] if self.models[0] == self.models[1] else f"{self.models[0]} → {self.models[1]}"
        return (
            f"family {self.family or 'all'}, scenario {scenario}, model {model}, strategy {self.strategy}, "
            f"backend {self.backend}, mode {self.mode}"
        )

    @property
    def failed(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class GateResult:
    cells: tuple[CellVerdict, ...]
    skipped: tuple[tuple[str, str], ...]  # (cell, why): unsupported on both sides, nothing to judge
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    alpha: float
    level: str
    metric: str
    simulated: bool
    unjudged: tuple[tuple[str, str], ...] = ()  # (cell, why it could not be judged)
    allow_unjudged: bool = False

    @property
    def failed(self) -> tuple[CellVerdict, ...]:
        return tuple(c for c in self.cells if c.failed)

    @property
    def passed(self) -> bool:
        """No cell regressed, and every cell was judged (or `allow_unjudged` says that is fine)."""
        return not self.failed and (self.allow_unjudged or not self.unjudged)

    @property
    def exit_code(self) -> int:
        """1: a cell regressed; 4: a cell was not judged (unless allowed); 0: neither."""
        return 1 if self.failed else 0 if self.passed else 4


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


def _test(m: Matched, b: Rate, c: Rate, config: GateConfig) -> tuple[str, float]:
    if m.paired:
        lost = sum(x and not y for x, y in zip(m.base_outcomes, m.cand_outcomes, strict=True))
        gained = sum(y and not x for x, y in zip(m.base_outcomes, m.cand_outcomes, strict=True))
        return f"McNemar exact, paired ({lost} lost, {gained} gained)", mcnemar(lost, gained)
    if config.test == "fisher":
        return "Fisher exact", fisher(b.x, b.n, c.x, c.n)
    p, is_exact = boschloo_one(b.x, b.n, c.x, c.n)
    return ("Boschloo exact" if is_exact else "mid-p (Boschloo approximated)"), p


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
    test, p = _test(m, b, c, config)
    floors = [f for f in {config.floor_for(r.cell) for r in m.cand} if f is not None]
    floor = max(floors, default=None)  # pooled cells: the strictest
    floor_p = None if floor is None else floor_pvalue(c.x, c.n, floor)
    scenario = key[4] if config.level == "scenario" else ""
    family = key[3] if config.level != "cell" else ""
    confidence = 1 - 2 * config.alpha
    worst = _worst_scenarios(m) if config.level != "scenario" else ()
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
        newcombe(c.x, c.n, b.x, b.n, confidence),
        confidence,
        test,
        p,
        p,
        floor,
        floor_p,
        floor_p,
        (),
        worst,
    )


def _pts(value: float) -> str:
    points = round(value * 100)
    return f"{points:+d}" if points else "0"


def _reasons(v: CellVerdict, alpha: float) -> tuple[str, ...]:
    out = []
    if v.p_holm <= alpha and v.difference.estimate < 0:
        d = v.difference
        out.append(
            f"{v.metric} rate dropped {v.baseline.value:.0%} → {v.candidate.value:.0%} "
            f"({_pts(d.estimate)} pts, {v.confidence:.0%} CI [{_pts(d.low)}, {_pts(d.high)}]); "
            f"one-sided {v.test} p = {v.p:.4f}, Holm-adjusted {v.p_holm:.4f} ≤ α = {alpha}"
            + (f"; largest drops: {', '.join(v.worst)}" if v.worst else "")
        )
    if v.floor is not None and v.floor_p_holm is not None and v.floor_p_holm <= alpha:
        out.append(
            f"{v.metric} rate {v.candidate.x}/{v.candidate.n} is under the floor {v.floor:.0%}: "
            f"one-sided exact binomial p = {v.floor_p:.4f}, Holm-adjusted {v.floor_p_holm:.4f} ≤ α = {alpha}"
        )
    return tuple(out)


def _adjust(verdicts: list[CellVerdict], alpha: float) -> list[CellVerdict]:
    adjusted = [replace(v, p_holm=p) for v, p in zip(verdicts, holm([v.p for v in verdicts]), strict=True)]
    with_floor = [i for i, v in enumerate(adjusted) if v.floor_p is not None]
    floor_holm = holm([adjusted[i].floor_p or 1.0 for i in with_floor])
    for i, p in zip(with_floor, floor_holm, strict=True):
        adjusted[i] = replace(adjusted[i], floor_p_holm=p)
    return [replace(v, reasons=_reasons(v, alpha)) for v in adjusted]


def _floor_notes(verdicts: Sequence[CellVerdict], alpha: float) -> tuple[list[str], list[str]]:
    floored = [v for v in verdicts if v.floor is not None]
    if not floored:
        return [], []
    m = len(floored)
    notes = [
        f'floor: one-sided exact binomial test of "rate ≥ floor" per cell, Holm across {m} cell(s): a '
        f"cell whose true rate equals its floor fails with probability ≤ {alpha / m:.4g} (≤ α = {alpha} "
        "for all of them together)"
    ]
    unreachable = sorted(
        {
            (v.floor, v.candidate.n)
            for v in floored
            if v.floor is not None and floor_pvalue(0, v.candidate.n, v.floor) > alpha / m
        }
    )
    warnings = [
        f"floor {f:.0%} cannot fail a cell of {n} runs: even 0/{n} is not significantly under it at "
        f"α/{m}; run more runs per cell"
        for f, n in unreachable
    ]
    return notes, warnings


def _power_note(verdicts: Sequence[CellVerdict], config: GateConfig) -> list[str]:
    """What the gate could see: the drop from 100% it catches with 80% probability, by the test it
    ran on the most common cell size, at the first Holm step (α/m). Skipped above 100 runs per side
    (the search is then slow, and such cells see small drops anyway)."""
    if not verdicts:
        return []
    sizes = Counter((v.baseline.n, v.candidate.n, v.test.startswith("McNemar")) for v in verdicts)
    (n_base, n_cand, paired), _ = sizes.most_common(1)[0]
    if n_base != n_cand or n_base > 100:
        return []
    alpha = config.alpha / len(verdicts)
    test = "mcnemar" if paired else config.test
    name = {"mcnemar": "McNemar on pairs", "boschloo": "Boschloo", "fisher": "Fisher"}[test]
    rate = detectable_rate(n_base, 1.0, alpha=alpha, test=test)
    seen = f"to {rate:.0%} or lower" if rate is not None else "not even to 0%"
    return [
        f"power: with {n_base} runs per side ({name}, α/m = {alpha:.2g}, the first Holm step) the gate "
        f"catches a drop from 100% {seen} with 80% probability"
    ]


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
    final = _adjust(verdicts, config.alpha)
    floor_notes, warnings = _floor_notes(final, config.alpha)
    notes = _model_notes(final) + notes + floor_notes + _power_note(final, config)
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
    )
