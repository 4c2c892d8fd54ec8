"""Running a config: expand the matrix, run every cell N times concurrently, append each result.

The plan is a generator; an executor (`evalkit.run.executors`: this process by default, or Ray workers)
pulls from it and hands back each finished record, so memory holds the runs in flight, not the
matrix. This process alone writes: each finished run is written at once (and dropped),
so an interrupted run loses at most the runs in flight, and `resume=True` skips every run id already
in the file; `shard` runs a stable slice of the plan (`evalkit.results.shards`). SIGINT/SIGTERM stop the
run at once: in-flight runs are cancelled, the segment gets
an `interrupted` footer and `KeyboardInterrupt` reaches the CLI (exit 130). A segment in which more of
a backend's runs than `max_infra_error_rate` were infra errors gets an `infra_errors` footer. The results file and
the recordings directory are locked for the life of the run. Backend faults are retried inside a
run; a run whose backend stays down is recorded as `infra_error` and the matrix goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from evalkit._version import __version__
from evalkit.agents.registry import describe_agents
from evalkit.backends.entry import BackendEntry
from evalkit.errors import ConfigError, ResultsError
from evalkit.results.integrity import InfraCount, infra_excess
from evalkit.results.lock import hold_outputs
from evalkit.results.records import NOT_COUNTED, Footer, FooterStatus, Header
from evalkit.results.secrets import public_config
from evalkit.results.shards import Shard, check_resume_shard
from evalkit.results.writer import Opener, ResultsWriter, finished_runs, truncate_partial_line
from evalkit.run.config import RunConfig
from evalkit.run.matrix import PlannedRun, iter_runs
from evalkit.run.preflight import (
    check_backends,
    check_output_path,
    check_resumable,
    check_same_agents,
    check_same_guards,
    check_same_phases,
    check_scenario_versions,
    discard_empty_leftover,
    preflight,
)
from evalkit.scenario.model import Scenario
from evalkit.strategies import guard_provenance

if TYPE_CHECKING:
    from evalkit.run.executors.base import Executor

__all__ = ["RunOptions", "arun_config", "default_output", "git_sha", "run_config"]

Progress = Callable[[int, int], None]
FooterSeen = Callable[[Footer], None]


class RunOptions(TypedDict, total=False):
    """How one invocation runs a config: the keyword options of `run_config` and `arun_config`, named
    once. Each one left out is off (False or None), as in a plain `evalkit run CONFIG`."""

    resume: bool  # continue `output`, skipping every run id it holds
    retry_infra: bool  # with `resume`: run again the runs recorded as `infra_error` (the new records supersede)
    record_dir: Path | None  # record every backend call under it (`--record`)
    progress: Progress | None  # called with (runs done, runs planned) after each run
    only_backends: set[str] | None  # run these backend labels now; the rest stay pending for a resume
    opener: Opener | None  # opens the results file (a seam for tests of a full disk)
    shard: Shard | None  # run only this deterministic slice of the plan (`evalkit.results.shards`)
    executor: Executor | None  # where the runs execute (`evalkit.run.executors`; default: this process)
    on_footer: FooterSeen | None  # sees each footer written (the CLI exits 3 on an `infra_errors` one)


def git_sha() -> str | None:
    """The commit of evalkit's own checkout, if it runs from one (a results header records it)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _finished(
    config: RunConfig, scenarios: list[Scenario], output: Path, options: RunOptions
) -> tuple[set[str], list[Header]]:
    """Run ids already in `output` that this invocation does not run again, and the file's headers."""
    if not output.exists() or discard_empty_leftover(output):
        return set(), []
    if not options.get("resume"):
        raise ResultsError(f"{output} exists: pass --resume to continue it, or choose another output")
    # a last line without its newline is a write the interruption cut: not a record, and in the way
    truncate_partial_line(output)
    found = finished_runs(output)
    check_resumable(config, found.headers, output)
    check_resume_shard(output, [h.shard for h in found.headers], options.get("shard"))
    retry = options.get("retry_infra", False)
    # with --retry-infra an infra error is not finished: its run runs again, and the new record supersedes
    kept = {run_id for run_id, outcome in found.outcomes.items() if not (retry and outcome == "infra_error")}
    counted = {
        r: v for r, v in found.versions.items() if r in kept and found.outcomes[r] not in NOT_COUNTED
    }  # not in a rate: their version does not matter
    check_scenario_versions(scenarios, counted, output)
    return kept, found.headers


def _phases(config: RunConfig, labels: set[str]) -> list[list[BackendEntry]]:
    """Groups of backend entries run together: every entry with a server it names runs at once;
    entries that evalkit serves run one at a time, so two local models never share the CPU."""
    active = [e for e in config.backends if e.label in labels]
    shared = [e for e in active if e.serve is None]
    return ([shared] if shared else []) + [[e] for e in active if e.serve is not None]


@dataclass
class _Job:
    """What every phase of one invocation shares."""

    config: RunConfig
    scenarios: list[Scenario]
    finished: set[str]
    writer: ResultsWriter
    executor: Executor
    options: RunOptions
    total: int = 0
    done: int = 0
    earlier: list[Header] = field(default_factory=list)  # the headers of the runs already in the file

    def pending(self, labels: set[str]) -> Iterator[PlannedRun]:
        runs = iter_runs(self.config, self.scenarios, labels)
        shard = self.options.get("shard")
        return (r for r in (shard.select(runs) if shard else runs) if r.run_id not in self.finished)


async def _run_phase(job: _Job, entries: list[BackendEntry]) -> None:
    """Run the pending runs of `entries` as one header..footer segment: the executor runs them (here
    or elsewhere) and hands back records; only this process writes."""
    config, writer, options = job.config, job.writer, job.options
    async with job.executor.phase(config, entries, options.get("record_dir")) as phase:
        status: FooterStatus = "interrupted"
        infra: dict[str, InfraCount] = {}
        written_before = writer.runs_written
        # the probe may be interrupted: until the header is written, a footer would have no segment to close
        backends = await phase.describe()
        guards = guard_provenance([s for specs in config.strategy_specs().values() for s in specs])
        check_same_phases(job.earlier, backends, writer.path)  # before the header: a refusal adds nothing
        check_same_guards(job.earlier, guards, writer.path)
        agents = describe_agents(config.agents, Path(config.base_dir or "."))
        check_same_agents(job.earlier, agents, writer.path)
        try:
            writer.write(
                Header(
                    evalkit_version=__version__,
                    git_sha=git_sha(),
                    started_at=_now(),
                    config_name=config.name,
                    config_hash=config.fingerprint(),
                    config=public_config(config.model_dump(mode="json")),
                    seed=config.seed,
                    runs_per_cell=config.runs,
                    simulated=phase.simulated,
                    backends=backends,
                    guards=guards,
                    agents=agents,
                    # the file already holds a segment: this header continues it
                    resumed=writer.path.stat().st_size > 0,
                    shard=str(options["shard"]) if options.get("shard") else None,
                )
            )
            pending = {e.label: job.pending({e.label}) for e in entries}
            async with contextlib.aclosing(phase.run(pending)) as records:
                async for record in records:
                    writer.write(record)
                    infra.setdefault(record.cell.backend, InfraCount()).add(record.outcome, record.error)
                    job.done += 1
                    if progress := options.get("progress"):
                        progress(job.done, job.total)
            status = "complete"
        finally:
            # a backend that was down: the segment measured the outage, and says so
            reason = infra_excess(infra, config.max_infra_error_rate) if status == "complete" else None
            footer = Footer(
                finished_at=_now(),
                status="infra_errors" if reason else status,
                runs_written=writer.runs_written - written_before,
                reason=reason,
            )
            # after a failed write the writer refuses more: the segment stays without a footer, which
            # every reader names as a run that did not finish
            if not writer.broken:
                writer.write(footer)
                if on_footer := options.get("on_footer"):
                    on_footer(footer)


@contextlib.contextmanager
def _stop_on_signals(task: asyncio.Task[Any] | None) -> Iterator[list[int]]:
    """SIGINT and SIGTERM cancel `task` (the run) from the event loop, never in the middle of a write;
    the list collects the signals received. The previous handlers come back afterwards."""
    received: list[int] = []
    # Python installs signal handlers from the main thread only; elsewhere the caller's handling stands
    if task is None or threading.current_thread() is not threading.main_thread():
        yield received
        return
    loop = asyncio.get_running_loop()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def stop(sig: int) -> None:
        received.append(sig)
        # a cancellation lands at the task's next await, never inside a record's write
        task.cancel()

    for sig in previous:
        loop.add_signal_handler(sig, stop, sig)
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, handler)


def _prepare_recordings(record_dir: Path, labels: set[str], finished: set[str], resume: bool) -> None:
    """Recordings mirror the results file: a fresh run needs a fresh directory, and a resumed one
    drops the calls of runs that were cut off (their new attempt is recorded instead)."""
    from evalkit.backends.recording import RECORDINGS_FILE, prune_unfinished

    if not resume:
        used = [label for label in labels if (record_dir / label / RECORDINGS_FILE).exists()]
        if used:
            raise ResultsError(
                f"{record_dir / used[0]} already holds recordings: record into a new directory, "
                "or pass --resume to continue the results file they belong to"
            )
        return
    for label in labels:
        prune_unfinished(record_dir / label, finished)


async def arun_config(config: RunConfig, output: Path, **options: Unpack[RunOptions]) -> Path:
    """Run every pending run of `config`, appending records to `output`; returns the path.

    The options are `RunOptions`. SIGINT/SIGTERM raise `KeyboardInterrupt` once the file is closed with
    an `interrupted` footer. A segment's footer has the status `infra_errors` when more than
    `config.max_infra_error_rate` of a backend's runs were infra errors.
    """
    unknown = sorted(set(options) - RunOptions.__optional_keys__)
    if unknown:  # refused as a misspelt keyword argument always was, with a type checker or without
        raise TypeError(f"arun_config() got an unexpected keyword argument {unknown[0]!r}")
    labels = _labels(config, options.get("only_backends"))
    record_dir = options.get("record_dir")
    resume = options.get("resume", False)
    shard = options.get("shard")
    scenarios = preflight(config, backends=set())  # everything checked before the output file is created
    check_output_path(output, record_dir)
    with hold_outputs(output, record_dir), _stop_on_signals(asyncio.current_task()) as received:
        finished, earlier = _finished(config, scenarios, output, options)
        # a backend with no run left needs nothing (a complete file resumes on a machine without its models)
        planned = iter_runs(config, scenarios, labels)
        left = (r for r in (shard.select(planned) if shard else planned) if r.run_id not in finished)
        check_backends(config, {r.entry.label for r in left})
        if record_dir is not None:
            _prepare_recordings(record_dir, labels, finished, resume)
        writer = ResultsWriter(output, append=output.exists(), opener=options.get("opener"))
        job = _Job(config, scenarios, finished, writer, options.get("executor") or _local(), options, earlier=earlier)
        # a backend with nothing pending gets no phase: no server is started for it
        busy = Counter(spec.entry.label for spec in job.pending(labels))
        job.total = sum(busy.values())
        try:
            for entries in _phases(config, set(busy)):
                await _run_phase(job, entries)
        except asyncio.CancelledError:
            # a signal's cancellation ends here, as KeyboardInterrupt once the file is closed;
            # any other cancellation is the caller's own
            if not received:
                raise
        finally:
            job.writer.close()
        if received:
            raise KeyboardInterrupt
    return output


def _labels(config: RunConfig, only: set[str] | None) -> set[str]:
    """The backend labels this invocation runs: `only`, each of them checked against the config."""
    labels = {e.label for e in config.backends}
    if only is None:
        return labels
    unknown = only - labels
    if unknown:
        raise ConfigError(f"{config.name}: no backend labelled {sorted(unknown)}")
    return set(only)


def _local() -> Executor:
    # here, not at the top: the local executor imports httpx and every backend kind, which a caller
    # that brings its own executor (Ray) or only imports this module does not need
    from evalkit.run.executors.local import LocalExecutor

    return LocalExecutor()


def default_output(config: RunConfig) -> Path:
    return Path(config.output) if config.output else Path("results") / f"{config.name}.jsonl"


def run_config(config: RunConfig, output: Path | None = None, **options: Unpack[RunOptions]) -> Path:
    """Synchronous wrapper around `arun_config` (default `output`: `default_output(config)`)."""
    return asyncio.run(arun_config(config, output or default_output(config), **options))
