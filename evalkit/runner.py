"""Running a config: expand the matrix, run every cell N times concurrently, append each result.

Runs are bounded per backend by the entry's `concurrency`. Each finished run is written and flushed
at once, so an interrupted run loses at most the runs in flight, and `resume=True` skips every run
id already in the file. Backend faults are retried inside a run; a run whose backend stays down is
recorded as `infra_error` and the matrix goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from evalkit import __version__
from evalkit.backends import Backend, RetryPolicy, create_backend
from evalkit.checks import judge_run
from evalkit.config import BackendEntry, RunConfig
from evalkit.errors import BackendError, ConfigError, ResultsError, ScenarioError
from evalkit.loop import run_loop
from evalkit.results import (
    Cell,
    Footer,
    Header,
    ResultsWriter,
    RunRecord,
    load_results,
    truncate_partial_line,
)
from evalkit.scenario import FAMILIES, Scenario, load_scenarios
from evalkit.serve import LlamaServer, server_for
from evalkit.strategies import StrategySpec, build_stack

__all__ = ["RunSpec", "arun_config", "plan_runs", "run_config"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RunSpec:
    run_id: str
    cell: Cell
    index: int
    seed: int
    scenario: Scenario
    stack: list[StrategySpec]
    entry: BackendEntry


def run_seed(base: int, backend: str, scenario: str, index: int) -> int:
    """The same for every strategy and mode, so their runs pair up for comparison."""
    digest = hashlib.sha256(f"{base}|{backend}|{scenario}|{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def load_config_scenarios(config: RunConfig) -> list[Scenario]:
    scenarios = load_scenarios(config.scenario_paths())
    known = set(FAMILIES) | set(config.custom_families)
    for scenario in scenarios:
        if scenario.family not in known:
            raise ScenarioError(scenario.source, f"family {scenario.family!r} is neither built in "
                                f"({', '.join(FAMILIES)}) nor declared in the config's custom_families",
                                field="family")
    if config.families:
        scenarios = [s for s in scenarios if s.family in config.families]
    return scenarios


def check_stacks(config: RunConfig) -> None:
    """Build every guard stack once, so a bad name or option fails before any run starts."""
    for specs in config.strategy_specs().values():
        build_stack(specs)


def plan_runs(config: RunConfig, scenarios: list[Scenario]) -> list[RunSpec]:
    specs = config.strategy_specs()
    runs: list[RunSpec] = []
    for entry in config.backends:
        for mode in config.modes:
            for label, stack in specs.items():
                for scenario in scenarios:
                    cell = Cell(backend=entry.label, model=entry.model, mode=mode, strategy=label,
                                scenario=scenario.id, family=scenario.family)
                    for i in range(config.runs):
                        run_id = f"{entry.label}/{mode}/{label}/{scenario.id}/{i}"
                        seed = run_seed(config.seed, entry.label, scenario.id, i)
                        runs.append(RunSpec(run_id, cell, i, seed, scenario, stack, entry))
    return runs


async def execute_run(spec: RunSpec, backend: Backend, config: RunConfig) -> RunRecord:
    sampling = config.sampling.model_copy(update={"seed": spec.seed})
    policy = RetryPolicy(spec.entry.retry.attempts, spec.entry.retry.base_delay_s, spec.entry.retry.max_delay_s)
    state, view = await run_loop(spec.scenario, build_stack(spec.stack), backend, mode=spec.cell.mode,
                                 sampling=sampling, run_id=spec.run_id, seed=spec.seed, policy=policy)
    verdict = judge_run(spec.scenario, state.outcome, view.executed, state.reply, turn_replies=state.turn_replies)
    ideal = spec.scenario.ideal_iterations
    return RunRecord(
        run_id=spec.run_id, cell=spec.cell, index=spec.index, seed=spec.seed, simulated=backend.simulated,
        outcome=state.outcome, completed=verdict.completed, correct=verdict.correct, failure=verdict.failure,
        first_try=verdict.correct and state.retries == 0, retries=state.retries,
        guard_fires=sum(1 for i in state.interventions if i.action != "prepare"),
        model_calls=len(state.calls), iterations=len(state.calls), ideal_iterations=ideal,
        wasted_calls=max(0, len(state.calls) - ideal), usage=state.usage, latency_s=state.latency_s,
        wall_s=state.wall_s, sampling=sampling, error=state.error, check=verdict.items,
        interventions=state.interventions, calls=state.calls, messages=view.messages)


def _git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


async def _describe(backend: Backend) -> dict[str, Any]:
    try:
        return await backend.describe()
    except BackendError as exc:  # the runs will record the outage; the header says why
        return {"kind": backend.kind, "model": backend.model, "error": str(exc)}


def _pending(config: RunConfig, runs: list[RunSpec], output: Path, resume: bool,
             retry_infra: bool = False) -> list[RunSpec]:
    if not output.exists():
        return runs
    if not resume:
        raise ResultsError(f"{output} exists: pass --resume to continue it, or choose another output")
    truncate_partial_line(output)
    previous = load_results([output])
    if previous.headers[0].config_hash != config.fingerprint():
        raise ResultsError(f"{output} was written by a different config (hash {previous.headers[0].config_hash}); "
                           "resume needs the same config")
    done = {r.run_id for r in previous.runs if not (retry_infra and r.outcome == "infra_error")}
    return [r for r in runs if r.run_id not in done]


class _Backends:
    """One httpx client and backend per config entry, optionally recording every call.

    An entry with `serve:` gets its own llama-server, started here and stopped by `aclose`.
    """

    def __init__(self) -> None:
        self.clients: dict[str, httpx.AsyncClient] = {}
        self.backends: dict[str, Backend] = {}
        self.servers: dict[str, LlamaServer] = {}

    @classmethod
    async def open(cls, config: RunConfig, entries: list[BackendEntry], record_dir: Path | None) -> _Backends:
        pool = cls()
        try:
            for entry in entries:
                if entry.serve is not None:
                    server = server_for(entry.serve, entry.model, Path(config.base_dir or "."))
                    pool.servers[entry.label] = server
                    # in this thread, not a worker: the server's parent-death signal follows the
                    # thread that started it; nothing else runs while a served phase starts
                    server.start()
                    entry = entry.model_copy(update={"url": server.url})
                client = httpx.AsyncClient(timeout=entry.timeout_s)
                pool.clients[entry.label] = client
                backend = create_backend(entry, client)
                if record_dir is not None:
                    from evalkit.backends.recording import RecordingBackend

                    backend = RecordingBackend(backend, record_dir / entry.label)
                pool.backends[entry.label] = backend
        except BaseException:
            await pool.aclose()
            raise
        return pool

    async def describe(self) -> dict[str, dict[str, Any]]:
        provenance = {label: await _describe(b) for label, b in self.backends.items()}
        for label, server in self.servers.items():
            provenance[label]["started_by_evalkit"] = await asyncio.to_thread(server.provenance)
        return provenance

    async def aclose(self) -> None:
        for backend in self.backends.values():
            await backend.aclose()
        for client in self.clients.values():
            await client.aclose()
        for server in self.servers.values():
            await asyncio.to_thread(server.stop)


def _phases(config: RunConfig, pending: list[RunSpec]) -> list[list[BackendEntry]]:
    """Groups of backend entries run together: every entry with a server it names runs at once;
    entries that evalkit serves run one at a time, so two local models never share the CPU."""
    labels = {r.entry.label for r in pending}
    active = [e for e in config.backends if e.label in labels]
    shared = [e for e in active if e.serve is None]
    return ([shared] if shared else []) + [[e] for e in active if e.serve is not None]


async def _run_phase(config: RunConfig, entries: list[BackendEntry], pending: list[RunSpec], writer: ResultsWriter,
                     record_dir: Path | None, progress: Progress | None, done_before: int, total: int) -> int:
    """Run the pending runs of `entries` as one header..footer segment; returns the runs written."""
    pool = await _Backends.open(config, entries, record_dir)
    status: Literal["complete", "interrupted"] = "interrupted"
    written_before = writer.runs_written
    try:
        writer.write(Header(
            evalkit_version=__version__, git_sha=_git_sha(), started_at=_now(), config_name=config.name,
            config_hash=config.fingerprint(), config=config.model_dump(mode="json"), seed=config.seed,
            runs_per_cell=config.runs, simulated=any(b.simulated for b in pool.backends.values()),
            backends=await pool.describe(), resumed=writer.path.stat().st_size > 0))
        limits = {e.label: asyncio.Semaphore(e.concurrency) for e in entries}

        async def one(spec: RunSpec) -> RunRecord:
            async with limits[spec.entry.label]:
                return await execute_run(spec, pool.backends[spec.entry.label], config)

        tasks = [asyncio.ensure_future(one(spec)) for spec in pending]
        try:
            for done, future in enumerate(asyncio.as_completed(tasks), start=done_before + 1):
                writer.write(await future)
                if progress:
                    progress(done, total)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks, return_exceptions=True)
        status = "complete"
    finally:
        written = writer.runs_written - written_before
        writer.write(Footer(finished_at=_now(), status=status, runs_written=written))
        await pool.aclose()
    return written


def _prepare_recordings(record_dir: Path, runs: list[RunSpec], pending: list[RunSpec], resume: bool) -> None:
    """Recordings mirror the results file: a fresh run needs a fresh directory, and a resumed one
    drops the calls of runs that were cut off (their new attempt is recorded instead)."""
    from evalkit.backends.recording import RECORDINGS_FILE, prune_unfinished

    labels = {r.entry.label for r in pending}
    if not resume:
        used = [label for label in labels if (record_dir / label / RECORDINGS_FILE).exists()]
        if used:
            raise ResultsError(f"{record_dir / used[0]} already holds recordings: record into a new directory, "
                               "or pass --resume to continue the results file they belong to")
        return
    finished = {r.run_id for r in runs} - {r.run_id for r in pending}
    for label in labels:
        prune_unfinished(record_dir / label, finished)


async def arun_config(config: RunConfig, output: Path, *, resume: bool = False, record_dir: Path | None = None,
                      progress: Progress | None = None, only_backends: set[str] | None = None,
                      retry_infra: bool = False) -> Path:
    """Run every pending run of `config`, appending records to `output`; returns the path.

    `retry_infra` (with `resume`) runs again the runs recorded as `infra_error`; their new records
    supersede the old ones. `only_backends` restricts this invocation to some backend labels (one
    server at a time, say); the rest stay pending for a later `resume`.
    """
    scenarios = load_config_scenarios(config)
    check_stacks(config)
    runs = plan_runs(config, scenarios)
    if only_backends is not None:
        unknown = only_backends - {e.label for e in config.backends}
        if unknown:
            raise ConfigError(f"{config.name}: no backend labelled {sorted(unknown)}")
        runs = [r for r in runs if r.entry.label in only_backends]
    pending = _pending(config, runs, output, resume, retry_infra)
    if record_dir is not None:
        _prepare_recordings(record_dir, runs, pending, resume)
    writer = ResultsWriter(output, append=output.exists())
    try:
        done = 0
        for entries in _phases(config, pending):
            labels = {e.label for e in entries}
            done += await _run_phase(config, entries, [r for r in pending if r.entry.label in labels], writer,
                                     record_dir, progress, done, len(pending))
    finally:
        writer.close()
    return output


def default_output(config: RunConfig) -> Path:
    return Path(config.output) if config.output else Path("results") / f"{config.name}.jsonl"


def run_config(config: RunConfig, output: Path | None = None, *, resume: bool = False,
               record_dir: Path | None = None, progress: Progress | None = None,
               only_backends: set[str] | None = None, retry_infra: bool = False) -> Path:
    """Synchronous wrapper around `arun_config`."""
    return asyncio.run(arun_config(config, output or default_output(config), resume=resume,
                                   record_dir=record_dir, progress=progress, only_backends=only_backends,
                                   retry_infra=retry_infra))


__all__ += ["check_stacks", "default_output", "load_config_scenarios", "run_seed"]
