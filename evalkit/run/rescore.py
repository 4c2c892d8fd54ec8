"""Re-judging a results file with the current checker, from the model outputs it stores.

Every run record keeps each model call's completion. `rescore_results` feeds those completions,
in order, back through the agent loop (the same guard stack, the scenario's current mocks) and
`checks.judge_run`, so a fixed checker, a fixed guard decision or a corrected scenario re-scores
old runs without a model or a server. Timings, usage and provenance stay as recorded; the headers
gain `rescored` (when, by which evalkit version and commit), and each re-judged run the hash of the
scenario version it was judged against now. Runs that never reached the model
(`infra_error`, `unsupported`) are copied unchanged, and so are an agent's runs (its column is in the
header's `agents`): the agent's own loop, not evalkit's, decided what followed each completion. A run
whose loop would now need a model call that was never made cannot be re-judged from its outputs: that
is an error naming the run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit._version import __version__
from evalkit.backends.base import RetryPolicy
from evalkit.backends.replay import ReplayBackend
from evalkit.errors import ConfigError, ReplayMiss, ResultsError
from evalkit.judge.verdict import judge_run
from evalkit.results.lock import hold_outputs
from evalkit.results.reader import iter_records
from evalkit.results.records import Header, RunRecord
from evalkit.results.writer import ResultsWriter
from evalkit.run.config import recorded_stacks
from evalkit.run.loop import run_loop
from evalkit.run.matrix import scenario_hash
from evalkit.run.runner import git_sha
from evalkit.scenario.model import Scenario
from evalkit.strategies import STRATEGIES, StrategySpec, build_stack
from evalkit.strategies.plugins import plugin_allowed

__all__ = ["RescoreSummary", "rescore_results"]

# a replayed answer cannot fail as a server can: a retry would only replay the same miss
_ONCE = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0)


@dataclass
class RescoreSummary:
    runs: int = 0
    rejudged: int = 0
    changed: int = 0


async def _rejudge(run: RunRecord, scenario: Scenario, stack: list[tuple[str, dict[str, Any]]]) -> RunRecord:
    try:
        state, view = await run_loop(
            scenario,
            build_stack(stack),
            ReplayBackend.of_run(run),
            mode=run.cell.mode,
            sampling=run.sampling,
            run_id=run.run_id,
            seed=run.seed,
            policy=_ONCE,
        )
    except ReplayMiss as exc:  # the current loop needs a model call that was never made
        raise ResultsError(str(exc)) from None
    verdict = judge_run(scenario, state.outcome, view.executed, state.reply)
    # the current loop may stop sooner than the recorded one did: only the calls it replayed count
    used = run.calls[: len(state.calls)]
    # a replay has no backend faults; the record keeps the retries the real call needed
    calls = [
        new.model_copy(update={"backend_retries": old.backend_retries})
        for old, new in zip(used, state.calls, strict=True)
    ]
    # the replayed calls' own tokens: a run that now stops earlier cost what those calls cost
    usage = run.usage.model_copy(
        update={
            "prompt_tokens": sum(c.completion.usage.prompt_tokens for c in used),
            "completion_tokens": sum(c.completion.usage.completion_tokens for c in used),
        }
    )
    return run.model_copy(
        update={
            "outcome": state.outcome,
            "completed": verdict.completed,
            "correct": verdict.correct,
            "failure": verdict.failure,
            "first_try": verdict.correct and state.retries == 0,
            "retries": state.retries,
            "guard_fires": sum(1 for i in state.interventions if i.action != "prepare"),
            "model_calls": len(calls),
            "iterations": len(calls),
            "ideal_iterations": scenario.ideal_iterations,
            "wasted_calls": max(0, len(calls) - scenario.ideal_iterations),
            "usage": usage,
            "scenario_hash": scenario_hash(scenario),
            "check": verdict.items,
            "interventions": state.interventions,
            "calls": calls,
            "messages": view.messages,
        }
    )


def _stamp(header: Header, source: str) -> Header:
    stamp = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "evalkit_version": __version__,
        "git_sha": git_sha(),
        "from": Path(source).name,
    }
    return header.model_copy(update={"rescored": stamp})


def rescore_results(
    source: str | Path, output: str | Path, scenarios: list[Scenario], allowed_plugins: Iterable[str] = ()
) -> RescoreSummary:
    """Write `output`: `source` with every run re-judged from its stored completions (output may be source).
    A plugin guard its header names is imported only if in `allowed_plugins`: a results file is data.

    The output is locked as a run locks it, so a rescore never replaces a file another writer is
    appending to; it is written whole to a temporary file, then renamed over the real path (a symlink
    keeps pointing at the rescored file)."""
    with hold_outputs(Path(output)):
        return _rescore_locked(Path(source), Path(output).resolve(), scenarios, allowed_plugins)


def _rescore_locked(
    source: Path, output: Path, scenarios: list[Scenario], allowed_plugins: Iterable[str]
) -> RescoreSummary:
    by_id = {s.id: s for s in scenarios}
    stacks: dict[str, list[tuple[str, dict[str, Any]]]] | None = None
    summary = RescoreSummary()
    agents: set[str] = set()  # agent columns: an agent cannot be re-run from its stored outputs
    # beside the output, so the final rename stays within one file system
    tmp = output.with_name(output.name + ".rescoring")
    # a leftover of a rescore killed outright; the lock says none is running
    tmp.unlink(missing_ok=True)
    writer = ResultsWriter(tmp)
    try:
        for record in iter_records(source):
            if isinstance(record, Header):
                stacks = recorded_stacks(record.config, str(source))
                _check_plugins(source, stacks, allowed_plugins)
                agents |= set(record.agents)
                record = _stamp(record, str(source))
            elif stacks is None:
                raise _no_header(source)
            elif isinstance(record, RunRecord):
                summary.runs += 1
                record = record if record.cell.strategy in agents else _rescored(record, by_id, stacks, summary)
            writer.write(record)
        if stacks is None:
            raise _no_header(source)
    # BaseException: a Ctrl-C must not leave a half-written temporary file either
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, output)
    return summary


def _no_header(source: Path) -> ResultsError:
    return ResultsError(f"{source}: no header record: not an evalkit results file")


def _check_plugins(source: str | Path, stacks: dict[str, list[StrategySpec]], allowed: Iterable[str]) -> None:
    """Refuse, before anything is imported, a plugin guard the user did not name."""
    for label, specs in stacks.items():
        for name, _ in specs:
            if name not in STRATEGIES and not plugin_allowed(name, allowed):
                raise ConfigError(
                    f"{source}: strategy stack {label!r} uses plugin guard {name!r}; re-judging would import it "
                    f"and run its code: if you trust it, pass --allow-plugin {name} (or --config with the run's config)"
                )


def _rescored(
    run: RunRecord,
    by_id: dict[str, Scenario],
    stacks: dict[str, list[tuple[str, dict[str, Any]]]],
    summary: RescoreSummary,
) -> RunRecord:
    # no verdict to redo: an infra error or an unsupported cell, or a run that never called the model
    if not run.counted or not run.calls:
        return run
    scenario = by_id.get(run.cell.scenario)
    if scenario is None:
        raise ResultsError(f"run {run.run_id}: scenario {run.cell.scenario!r} is not among the scenarios given")
    if run.cell.strategy not in stacks:
        raise ResultsError(f"run {run.run_id}: its header has no strategy stack {run.cell.strategy!r}")
    new = asyncio.run(_rejudge(run, scenario, stacks[run.cell.strategy]))
    summary.rejudged += 1
    if (new.outcome, new.completed, new.correct, new.failure) != (run.outcome, run.completed, run.correct, run.failure):
        summary.changed += 1
    return new
