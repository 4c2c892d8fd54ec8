"""The runs a config asks for, and executing one of them.

A `PlannedRun` is one cell's i-th run with everything needed to execute it anywhere (the local
executor, a Ray worker): its scenario, guard stack, backend entry and seed. Runs of different
strategies and modes share a seed, so they pair up for comparison.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from evalkit.backends.base import Backend, RetryPolicy
from evalkit.backends.entry import BackendEntry
from evalkit.judge.verdict import judge_run
from evalkit.results.records import Cell, RunRecord
from evalkit.run.config import RunConfig
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import StrategySpec, build_stack

__all__ = ["PlannedRun", "execute_run", "iter_runs", "plan_runs", "run_seed", "scenario_hash"]

# what documents a scenario but neither the model nor the checker ever reads
_NOT_JUDGED = {"description", "provenance"}


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    cell: Cell
    index: int
    seed: int
    scenario: Scenario
    stack: list[StrategySpec]
    entry: BackendEntry
    scenario_hash: str | None = None
    agent: str | None = None  # the label of the config's agent that runs it, instead of evalkit's loop


def scenario_hash(scenario: Scenario) -> str:
    """A hash of what a run of `scenario` is given and judged by (its prompt, turns, tools, mocks,
    reference and check), so records judged against two versions of a scenario tell apart."""
    # sorted keys: the same scenario written with its keys in another order is the same version
    data = json.dumps(scenario.model_dump(mode="json", exclude=_NOT_JUDGED), sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def run_seed(base: int, backend: str, scenario: str, index: int) -> int:
    """The same for every strategy and mode, so their runs pair up for comparison."""
    # a hash, not Python's hash(): the same seeds on every machine and every run of the interpreter
    digest = hashlib.sha256(f"{base}|{backend}|{scenario}|{index}".encode()).digest()
    # non-negative and below 2³¹: it fits a server's seed field whether that is signed or not
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def iter_runs(config: RunConfig, scenarios: list[Scenario], labels: set[str] | None = None) -> Iterator[PlannedRun]:
    """The matrix, one run at a time (optionally only the backend entries in `labels`)."""
    specs = config.strategy_specs()
    # once a scenario, not once a run: a hash dumps the whole scenario to JSON
    hashes = {id(s): scenario_hash(s) for s in scenarios}
    for entry in config.backends:
        if labels is not None and entry.label not in labels:
            continue
        modes, labels_here = config.cells_of(entry)
        for mode in modes:
            for label in labels_here:
                if not config.runs_in(label, mode):
                    continue
                stack = specs.get(label, [])
                agent = label if label in config.agents else None
                for scenario in scenarios:
                    cell = Cell(
                        backend=entry.label,
                        model=entry.model,
                        mode=mode,
                        strategy=label,
                        scenario=scenario.id,
                        family=scenario.family,
                    )
                    for i in range(config.runs):
                        run_id = f"{entry.label}/{mode}/{label}/{scenario.id}/{i}"
                        seed = run_seed(config.seed, entry.label, scenario.id, i)
                        yield PlannedRun(run_id, cell, i, seed, scenario, stack, entry, hashes[id(scenario)], agent)


def plan_runs(config: RunConfig, scenarios: list[Scenario]) -> list[PlannedRun]:
    return list(iter_runs(config, scenarios))


async def execute_run(spec: PlannedRun, backend: Backend, config: RunConfig) -> RunRecord:
    # the run's seed goes to the server too: a seeded local model repeats its answer on a re-run
    sampling = config.sampling.model_copy(update={"seed": spec.seed})
    policy = RetryPolicy(spec.entry.retry.attempts, spec.entry.retry.base_delay_s, spec.entry.retry.max_delay_s)
    state, view = await run_loop(
        spec.scenario,
        build_stack(spec.stack),
        backend,
        mode=spec.cell.mode,
        sampling=sampling,
        run_id=spec.run_id,
        seed=spec.seed,
        policy=policy,
    )
    verdict = judge_run(spec.scenario, state.outcome, view.executed, state.reply, turn_replies=state.turn_replies)
    ideal = spec.scenario.ideal_iterations
    return RunRecord(
        run_id=spec.run_id,
        cell=spec.cell,
        index=spec.index,
        seed=spec.seed,
        simulated=backend.simulated,
        outcome=state.outcome,
        completed=verdict.completed,
        correct=verdict.correct,
        failure=verdict.failure,
        first_try=verdict.correct and state.retries == 0,
        retries=state.retries,
        # choosing a context (`prepare`) is no rescue: it is not counted as a guard firing
        guard_fires=sum(1 for i in state.interventions if i.action != "prepare"),
        model_calls=len(state.calls),
        iterations=len(state.calls),
        ideal_iterations=ideal,
        wasted_calls=max(0, len(state.calls) - ideal),
        usage=state.usage,
        latency_s=state.latency_s,
        wall_s=state.wall_s,
        sampling=sampling,
        error=state.error,
        scenario_hash=spec.scenario_hash or scenario_hash(spec.scenario),
        check=verdict.items,
        interventions=state.interventions,
        calls=state.calls,
        messages=view.messages,
    )
