"""`evalkit gate --sequential`: run a candidate config in batches and stop early on a Wald SPRT.

Each batch runs the whole config for `batch` more runs per cell, into a results file of its own
(`batch-000.jsonl`, ...) with a seed derived from the config's seed and the batch number, so no two
batches repeat a run. Each cell (backend/mode/strategy/scenario) gets its own SPRT of H₀ p = p0
against H₁ p = p1 on its completion outcomes, in run order; its α is divided by the number of cells
(Bonferroni) so the whole gate keeps its false-alarm rate. Batches continue until every cell has
decided or `max_runs` runs per cell are spent. A cell still undecided then is truncated: it counts
as a regression when its log-likelihood ratio lies above the midpoint of the two bounds.
Wald's bounds are approximate; the realised error rates are what `benchmarks/gate_power.py` shows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from evalkit.config import RunConfig
from evalkit.errors import GateInputError
from evalkit.gate_config import SequentialSettings
from evalkit.results import RunRecord, load_results
from evalkit.runner import run_config
from evalkit.stats import SprtResult, sprt

__all__ = ["SequentialCell", "SequentialResult", "batch_seed", "render_sequential", "run_sequential"]



@dataclass(frozen=True)
class SequentialCell:
    name: str
    decision: str  # regression | accept | regression (truncated) | accept (truncated)
    runs_used: int
    failures: int
    llr: float

    @property
    def regression(self) -> bool:
        return self.decision.startswith("regression")


@dataclass(frozen=True)
class SequentialResult:
    cells: tuple[SequentialCell, ...]
    settings: SequentialSettings
    alpha_per_cell: float
    batches: int
    runs_executed: int
    simulated: bool

    @property
    def passed(self) -> bool:
        return not any(c.regression for c in self.cells)


def batch_seed(seed: int, batch: int) -> int:
    return (seed * 1_000_003 + batch * 7_919) % 2**31


def _name(run: RunRecord) -> str:
    c = run.cell
    return f"{c.backend}/{c.mode}/{c.strategy}/{c.scenario}"


def _run_batch(config: RunConfig, out_dir: Path, batch: int, size: int) -> list[RunRecord]:
    batch_config = config.model_copy(update={"runs": size, "seed": batch_seed(config.seed, batch)})
    path = out_dir / f"batch-{batch:03d}.jsonl"
    run_config(batch_config, path, resume=path.exists())
    return sorted(load_results([path]).runs, key=lambda r: r.index)


def _decide(name: str, outcomes: list[bool], settings: SequentialSettings, alpha: float,
            final: bool) -> SequentialCell | None:
    result: SprtResult = sprt(outcomes, settings.p0, settings.p1, alpha=alpha, beta=settings.beta)
    if result.decision != "continue":
        return SequentialCell(name, result.decision, result.runs, result.failures, result.llr)
    if not final:
        return None
    decision = "regression" if result.llr > (result.upper + result.lower) / 2 else "accept"
    return SequentialCell(name, f"{decision} (truncated)", result.runs, result.failures, result.llr)


def _tally(runs: list[RunRecord], tallies: dict[str, list[int]]) -> None:
    for run in runs:
        if run.outcome != "unsupported":
            tally = tallies[_name(run)]
            tally[0] += 1
            tally[1] += run.outcome == "infra_error"


def _check_infra(tallies: dict[str, list[int]], max_infra_error_rate: float) -> None:
    """Unusable input, as in the fixed-N gate: a cell with too many infra errors (a broken backend)."""
    for name, (supported, infra) in sorted(tallies.items()):
        if infra / supported > max_infra_error_rate:
            raise GateInputError(f"{name}: {infra} of {supported} candidate runs are infra errors, more than "
                                 f"max_infra_error_rate {max_infra_error_rate:.0%}; fix the backend and rerun")


def run_sequential(config: RunConfig, out_dir: Path, settings: SequentialSettings, *,
                   max_infra_error_rate: float = 0.1) -> SequentialResult:
    """Run batches of `config` into `out_dir` until every cell's SPRT decides (or max_runs).

    Raises GateInputError when a cell has more infra errors than `max_infra_error_rate` allows, or
    when no run counted at all (a gate with nothing to judge must not pass)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outcomes: dict[str, list[bool]] = defaultdict(list)
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # cell → [supported runs, infra errors]
    decided: dict[str, SequentialCell] = {}
    batch, executed, simulated, done_runs = 0, 0, False, 0
    while True:
        size = min(settings.batch, settings.max_runs - done_runs)
        runs = _run_batch(config, out_dir, batch, size)
        batch, executed, done_runs = batch + 1, executed + len(runs), done_runs + size
        simulated = simulated or any(r.simulated for r in runs)
        _tally(runs, tallies)
        for run in runs:
            if run.counted:
                outcomes[_name(run)].append(run.completed)
        alpha = settings.alpha / max(1, len(outcomes))
        final = done_runs >= settings.max_runs
        for name in sorted(outcomes):
            if name not in decided and (cell := _decide(name, outcomes[name], settings, alpha, final)):
                decided[name] = cell
        if not outcomes:
            raise GateInputError(f"{config.name}: no candidate run counted (all unsupported or infra errors)")
        if final or len(decided) == len(outcomes):
            break
    _check_infra(tallies, max_infra_error_rate)
    return SequentialResult(tuple(decided[n] for n in sorted(decided)), settings, alpha, batch, executed, simulated)


def render_sequential(result: SequentialResult) -> str:
    s = result.settings
    regressions = [c for c in result.cells if c.regression]
    lines = [f"evalkit gate --sequential: {'PASS' if result.passed else 'FAIL'}: {len(regressions)} of "
             f"{len(result.cells)} cells regressed (SPRT p0 = {s.p0}, p1 = {s.p1}, α = {s.alpha} "
             f"[{result.alpha_per_cell:.4g} per cell], β = {s.beta}); {result.runs_executed} runs in "
             f"{result.batches} batches of up to {s.batch} per cell"]
    if result.simulated:
        lines.append("SIMULATED results: the candidate ran on the simulated backend, not a real model.")
    for cell in result.cells:
        mark = "FAIL" if cell.regression else "pass"
        lines.append(f"{mark} {cell.name}: {cell.decision} after {cell.runs_used} runs "
                     f"({cell.failures} failed; log LR {cell.llr:+.2f})")
    return "\n".join(lines)
