"""`evalkit gate --sequential`: run a candidate config in batches against a baseline, stop early.

Why: the fixed-N gate spends `max_runs` runs on every cell, though most cells are decided long
before. A cell that collapsed fails in its first batch; a cell that would pass even if every run
still to come failed has passed. Stopping each cell as soon as its fixed-N verdict is certain
(curtailment) gives the verdict the fixed-N test would give, with its error rates, for fewer runs
(tests/stats/test_stopping_rule.py holds both); the `futility` setting stops likely passes sooner,
at a bounded cost in power.

Each batch runs `batch` more runs per undecided cell (backend/mode/strategy/scenario) into a results
file of its own (`batch-000.jsonl`, ...), with a seed derived from the config's seed and the batch
number, so no two batches repeat a run. A batch runs only what undecided cells need: the config is
narrowed to their backends, modes, strategies and scenarios, and runs of decided cells that the
narrowed matrix still contains are not counted. Each cell is judged against the baseline's cell by
the curtailed fixed-N rule of `evalkit.stats.stopping_rule` at α/m (Bonferroni over the m cells), on
the gate's metric (`correct` by default). A cell whose infra errors left it short of `max_runs`
counted runs is decided by the fixed-N test on the runs it has.

Every baseline cell and every cell the candidate config runs is accounted for: a cell on one side
only, a baseline cell that is partial or over the infra limit, and a candidate cell whose infra
errors are over the limit in that cell end as not judged (`evalkit.gate.accounting`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import GateInputError
from evalkit.gate.accounting import infra_reason, partial_reasons
from evalkit.gate.config import GateConfig, SequentialSettings
from evalkit.gate.match import check_infra
from evalkit.results.reader import load_results
from evalkit.results.runs import Results, RunRow
from evalkit.run.config import RunConfig
from evalkit.run.preflight import config_scenarios
from evalkit.run.runner import run_config
from evalkit.stats.exact import unpaired_pvalues
from evalkit.stats.stopping_rule import CellRule, cell_rule, decide, operating_characteristics

__all__ = ["SequentialCell", "SequentialResult", "baseline_counts", "batch_seed", "run_sequential"]


@dataclass(frozen=True)
class SequentialCell:
    name: str  # backend/mode/strategy/scenario
    family: str
    model: str
    decision: str  # regression | accept | accept (futility) | regression (short) | accept (short)
    passes: int
    runs_used: int
    baseline: tuple[int, int]
    failures_to_fail: int

    @property
    def regression(self) -> bool:
        return self.decision.startswith("regression")

    @property
    def where(self) -> str:
        backend, mode, strategy, scenario = self.name.split("/", 3)
        return (
            f"family {self.family}, scenario {scenario}, model {self.model}, strategy {strategy}, "
            f"backend {backend}, mode {mode}"
        )


@dataclass(frozen=True)
class SequentialResult:
    cells: tuple[SequentialCell, ...]
    settings: SequentialSettings
    alpha: float
    alpha_per_cell: float
    metric: str
    batches: int
    runs_executed: int
    simulated: bool
    unjudged: tuple[tuple[str, str], ...] = ()  # (cell, why it could not be judged)
    allow_unjudged: bool = False
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return any(c.regression for c in self.cells)

    @property
    def passed(self) -> bool:
        return not self.failed and (self.allow_unjudged or not self.unjudged)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0 if self.passed else 4


def batch_seed(seed: int, batch: int) -> int:
    # each batch its own seeds, or every batch would repeat the first one's runs; primes spread them
    return (seed * 1_000_003 + batch * 7_919) % 2**31


def _name(run: RunRow) -> str:
    c = run.cell
    return f"{c.backend}/{c.mode}/{c.strategy}/{c.scenario}"


def baseline_counts(baseline: Results[RunRow], metric: str) -> dict[str, tuple[int, int]]:
    """Per scenario cell: (passes, counted runs) of the metric."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in baseline.runs:
        if run.counted:
            counts[_name(run)][0] += bool(getattr(run, metric))
            counts[_name(run)][1] += 1
    return {name: (x, n) for name, (x, n) in counts.items()}


def _narrowed(config: RunConfig, undecided: set[str], sources: dict[str, str]) -> RunConfig:
    """The config restricted to the coordinates of the undecided cells."""
    parts = [name.split("/", 3) for name in undecided]
    backends, modes, strategies, scenarios = ({p[i] for p in parts} for i in range(4))
    return config.model_copy(
        update={
            "backends": [b for b in config.backends if b.label in backends],
            "modes": [m for m in config.modes if m in modes],
            "strategies": {k: v for k, v in config.strategies.items() if k in strategies},
            "scenarios": sorted(sources[s] for s in scenarios),
            "families": None,
        }
    )


def _run_batch(config: RunConfig, out_dir: Path, batch: int, size: int) -> list[RunRow]:
    batch_config = config.model_copy(update={"runs": size, "seed": batch_seed(config.seed, batch)})
    path = out_dir / f"batch-{batch:03d}.jsonl"
    # a batch file left by an interrupted gate is finished, not run again: the same seeds give the same runs
    run_config(batch_config, path, resume=path.exists())
    return sorted(load_results([path]).runs, key=lambda r: r.index)


def baseline_unjudged(baseline: Results[RunRow], gate: GateConfig) -> dict[str, str]:
    """Baseline cells that cannot serve as a reference: partial, or over the infra limit in the cell."""
    by_name: dict[str, list[RunRow]] = defaultdict(list)
    for run in baseline.runs:
        by_name[_name(run)].append(run)
    partial = {"/".join(k[:3] + k[4:]): why for k, why in partial_reasons(baseline, "baseline").items()}
    out = {}
    for name, runs in by_name.items():
        why = infra_reason(runs, "baseline", gate.max_infra_error_rate) or partial.get(name)
        if why or not any(r.counted for r in runs):
            out[name] = why or "no counted baseline runs"
    return out


def _rules(names: set[str], base: dict[str, tuple[int, int]], gate: GateConfig) -> dict[str, CellRule]:
    # α/m over the cells judged, as the fixed-N gate's first Holm step
    s, alpha = gate.sequential, gate.alpha / max(1, len(names))
    looks = -(-s.max_runs // s.batch) - 1  # every batch but the last
    return {n: cell_rule(*base[n], s.max_runs, alpha, looks=looks, futility=s.futility, test=gate.test) for n in names}


def _short_decision(rule: CellRule, passes: int, runs: int) -> str:
    """Infra errors left the cell short of max_runs: the fixed-N test on the runs it has."""
    p = float(unpaired_pvalues(rule.base_n, runs, rule.test)[rule.base_x, passes]) if runs else 1.0
    return "regression (short)" if p <= rule.final_alpha else "accept (short)"


def _cell(name: str, run: RunRow, rule: CellRule, decision: str, outcomes: list[bool]) -> SequentialCell:
    return SequentialCell(
        name,
        run.cell.family,
        run.cell.model,
        decision,
        sum(outcomes),
        len(outcomes),
        (rule.base_x, rule.base_n),
        rule.failures_to_fail,
    )


class _State:
    def __init__(self) -> None:
        self.outcomes: dict[str, list[bool]] = defaultdict(list)
        self.first: dict[str, RunRow] = {}
        self.decided: dict[str, SequentialCell] = {}
        self.runs: list[RunRow] = []

    def add(self, runs: list[RunRow], metric: str) -> None:
        self.runs += runs
        for run in runs:
            name = _name(run)
            # a decided cell's later runs (it shared a batch with undecided ones) change nothing
            if run.outcome == "unsupported" or name in self.decided:
                continue
            self.first.setdefault(name, run)
            if run.counted:
                self.outcomes[name].append(bool(getattr(run, metric)))


def _decide_all(state: _State, rules: dict[str, CellRule], final: bool) -> None:
    for name, rule in sorted(rules.items()):
        if name in state.decided:
            continue
        seen = state.outcomes[name]
        decision: str = decide(rule, sum(seen), len(seen) - sum(seen), interim=not final)
        # still open after the last batch: infra errors left it short, so the fixed-N test decides
        if decision == "continue" and final:
            decision = _short_decision(rule, sum(seen), len(seen))
        if decision != "continue":
            state.decided[name] = _cell(name, state.first[name], rule, decision, seen)


def run_sequential(config: RunConfig, baseline: Results[RunRow], out_dir: Path, gate: GateConfig) -> SequentialResult:
    """Run batches of `config` into `out_dir` until every cell has its verdict against `baseline`.

    Raises GateInputError when infra errors exceed `max_infra_error_rate` in a strategy column, or
    when no candidate run counted at all; cells on one side only are not judged."""
    settings = gate.sequential
    base = baseline_counts(baseline, gate.metric)
    in_baseline = {_name(r) for r in baseline.runs if r.outcome != "unsupported"}
    unusable = baseline_unjudged(baseline, gate)
    sources = {s.id: s.source for s in config_scenarios(config)}
    out_dir.mkdir(parents=True, exist_ok=True)
    state, rules, batch, done = _State(), dict[str, CellRule](), 0, 0
    narrowed = config
    while done < settings.max_runs:
        size = min(settings.batch, settings.max_runs - done)
        state.add(_run_batch(narrowed, out_dir, batch, size), gate.metric)
        batch, done = batch + 1, done + size
        if not state.outcomes:
            raise GateInputError(f"{config.name}: no candidate run counted (all unsupported or infra errors)")
        # the rules are set once, after the first batch: the cells judged (and so α/m) do not change later
        rules = rules or _rules(set(state.first) & (in_baseline - unusable.keys()), base, gate)
        _decide_all(state, rules, final=done >= settings.max_runs)
        undecided = set(rules) - set(state.decided)
        if not undecided:
            break
        # the next batch runs only what is undecided: a decided cell costs nothing more
        narrowed = _narrowed(config, undecided, sources)
    check_infra(state.runs, "candidate", gate)
    unjudged = _unjudged(state, in_baseline, unusable, gate)
    cells = tuple(state.decided[n] for n in sorted(state.decided) if n not in unjudged)
    return SequentialResult(
        cells,
        settings,
        gate.alpha,
        gate.alpha / max(1, len(rules)),
        gate.metric,
        batch,
        len(state.runs),
        any(r.simulated for r in state.runs),
        tuple(sorted(unjudged.items())),
        gate.allow_unjudged,
        tuple(_power_notes(rules, settings)),
    )


def _power_notes(rules: dict[str, CellRule], settings: SequentialSettings) -> list[str]:
    """What the sequential verdict could have missed, per baseline count (the most common first):
    the candidate rate whose fixed-N test at max_runs fails with 80% probability given the
    baseline's counts, and the chance the curtailed, futility-stopped procedure catches it (exact)."""
    groups = Counter((r.base_x, r.base_n) for r in rules.values())
    notes = []
    for (x, n), count in groups.most_common(3):
        rule = next(r for r in rules.values() if (r.base_x, r.base_n) == (x, n))
        # a baseline so low that even max_runs failures are not significant: say so, not a power of 0
        if rule.failures_to_fail > rule.max_runs:
            notes.append(f"power: {count} cell(s) with a baseline of {x}/{n}: no result can fail them at α/m")
            continue
        caught, _ = operating_characteristics(rule, rule.p1, settings.batch)
        notes.append(
            f"power: {count} cell(s) with a baseline of {x}/{n} ({rule.test}, α/m = {rule.alpha:.2g}): a drop "
            f"to {rule.p1:.0%} is caught with probability {caught:.2f} (exact, given the baseline's counts; "
            f"the fixed-N test at {rule.max_runs} runs alone: 0.80)"
        )
    if len(groups) > 3:
        notes.append(f"power: {sum(c for _, c in groups.most_common()[3:])} more cells with other baselines")
    return notes


def _unjudged(state: _State, in_baseline: set[str], unusable: dict[str, str], gate: GateConfig) -> dict[str, str]:
    """Every cell of either side that has no verdict, with the reason."""
    ran = {_name(r) for r in state.runs if r.outcome != "unsupported"}
    out = {name: "not in the candidate config" for name in in_baseline - ran}
    out |= {name: "not in the baseline" for name in ran - in_baseline}
    out |= {name: why for name, why in unusable.items() if name in ran}
    by_name: dict[str, list[RunRow]] = defaultdict(list)
    for run in state.runs:
        by_name[_name(run)].append(run)
    for name, runs in by_name.items():
        why = infra_reason(runs, "candidate", gate.max_infra_error_rate)
        if why and name not in out:
            out[name] = why
    return out
