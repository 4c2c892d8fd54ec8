"""`evalkit run CONFIG`: run a matrix and append results; prints a summary read back from the file."""

from __future__ import annotations

import argparse
import os
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.options import PATH, RUNS, SHARE, SLOTS, add_allow_state_module
from evalkit.cli.progress import ProgressBar
from evalkit.errors import ConfigError, EvalkitError, TooManyInfraErrors
from evalkit.report import FORMATS, ReportFormat, format_for_suffix
from evalkit.results.escaping import plural
from evalkit.results.integrity import unreachable_backends
from evalkit.results.output_file import check_output
from evalkit.results.scan import scan_results
from evalkit.results.shards import parse_shard
from evalkit.run.config import load_config
from evalkit.run.executors import EXECUTORS, create_executor
from evalkit.run.matrix import iter_runs
from evalkit.run.preflight import MAX_PLANNED_RUNS, config_scenarios
from evalkit.run.runner import default_output, run_config

if TYPE_CHECKING:
    from evalkit.results.records import Footer
    from evalkit.results.shards import Shard
    from evalkit.run.config import RunConfig

__all__ = ["add_arguments", "config_variables", "resume_command", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", type=PATH)
    p.add_argument("-o", "--out", type=PATH, help="results file (default: the config's output, or results/NAME.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted results file, skipping finished runs")
    p.add_argument(
        "--retry-infra",
        action="store_true",
        help="with --resume: run again the runs recorded as infra_error (the new records supersede them)",
    )
    p.add_argument("--record", type=PATH, metavar="DIR", help="record every backend request/response under DIR")
    p.add_argument(
        "--replay",
        type=PATH,
        metavar="DIR",
        help="serve every backend from a --record DIR instead (no server); default output NAME-replay.jsonl",
    )
    p.add_argument("-n", "--runs", type=RUNS, help="override the config's runs per cell")
    p.add_argument(
        "--max-infra-error-rate",
        type=SHARE,
        metavar="SHARE",
        help="override the config's max_infra_error_rate (default 0.1): more of a backend's runs than this "
        "as infra errors exits 3",
    )
    p.add_argument(
        "--backend",
        action="append",
        metavar="LABEL",
        help="run only this backend entry now (repeatable); the others stay pending for --resume",
    )
    p.add_argument(
        "--report",
        type=PATH,
        metavar="FILE",
        help="also write a report of the whole results file (format from the suffix: "
        + ", ".join(r.suffix for r in FORMATS.values())
        + ")",
    )
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N of the plan (a stable slice by run id); join them with `evalkit merge`",
    )
    p.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="where the runs execute: this process, or Ray workers (pip install 'evalkit[ray]')",
    )
    p.add_argument("--address", help="with --executor ray: the cluster (ray://HOST:10001, or auto); default local")
    p.add_argument(
        "--workers", type=SLOTS, help="with --executor ray: Ray workers, one shard each (default: one per node)"
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress: no bar on a terminal, no line every few seconds otherwise",
    )
    add_allow_state_module(p)
    p.set_defaults(handler=run)


def _planned(config: RunConfig, only: set[str] | None, shard: Shard | None) -> int:
    """How many runs this invocation plans. Counted without building them, unless a shard must pick
    its runs by id, and then only for a plan `preflight` accepts: this runs before `preflight`
    refuses an oversized plan, and must not take as long as that plan is big."""
    scenarios = config_scenarios(config)
    total = config.cell_count(len(scenarios), only) * config.runs
    if shard is None or total > MAX_PLANNED_RUNS:
        return total
    return sum(1 for _ in shard.select(iter_runs(config, scenarios, only)))  # lazily: memory stays flat


def config_variables(config: RunConfig, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment variables the config's server phases and agents read (`${NAME}` in a phase's
    `venv` or `python`, an agent's `venv` option: which install runs) with the values set now; unset
    ones read their default, as a resume will."""
    from evalkit.backends.phase_config import variables_in

    texts = [
        text
        for entry in config.backends
        for phase in ((entry.serve.phases or []) if entry.serve is not None else [])
        for text in (phase.venv, phase.python)
    ]
    texts += [agent.options.get("venv") for agent in config.agents.values()]
    names = [name for text in texts if isinstance(text, str) and text for name in variables_in(text)]
    # set ones only: an unset variable reads its default on the resume too, and needs no assignment
    return {name: environ[name] for name in dict.fromkeys(names) if environ.get(name)}


def resume_command(args: argparse.Namespace, output: Path, variables: Mapping[str, str] | None = None) -> str:
    """The command that continues this invocation: the same config, output and options, with --resume,
    after the variables that chose the install the runs so far used (`config_variables`)."""
    words = ["evalkit", "run", str(args.config), "--resume", "-o", str(output)]
    options: list[tuple[str, object]] = [
        ("--replay", args.replay),
        ("--record", args.record),
        ("-n", args.runs),
        ("--max-infra-error-rate", args.max_infra_error_rate),
        ("--shard", args.shard),
        ("--report", args.report),
        ("--address", args.address),
        ("--workers", args.workers),
    ]
    words += [w for flag, value in options if value is not None for w in (flag, str(value))]
    words += [w for label in args.backend or [] for w in ("--backend", label)]
    words += [w for module in args.allow_state_module for w in ("--allow-state-module", module)]
    if args.executor != "local":
        words += ["--executor", args.executor]
    if args.retry_infra:
        words.append("--retry-infra")
    # quoted, so the line can be pasted into a shell as it is, whatever the paths and values hold
    assignments = [f"{name}={shlex.quote(value)}" for name, value in (variables or {}).items()]
    return " ".join([*assignments, shlex.join(words)])


def _stopped(args: argparse.Namespace, output: Path, planned: int, variables: Mapping[str, str]) -> str:
    """The closing line of an interrupted run: what the file holds and how to go on."""
    try:
        held = f"{len(scan_results([output]).runs)} of {planned} runs finished in {output}"
    except (EvalkitError, OSError):  # a damaged file: the count is a courtesy, the command still holds
        held = f"results in {output}"
    return f"{held}; continue with: {resume_command(args, output, variables)}"


def _report_format(path: Path) -> ReportFormat:
    """`--report`'s format (from its suffix), its path checked as an output."""
    fmt = format_for_suffix(path)
    if fmt is None:
        suffixes = ", ".join(sorted(r.suffix for r in FORMATS.values()))
        raise ConfigError(f"--report {path}: unknown suffix (use one of {suffixes})")
    check_output(path, option="--report")
    return fmt


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config).allowing_state_modules(args.allow_state_module)
    # the replay first: `-n` and the infra limit then apply to the replayed matrix as to any other
    if args.replay is not None:
        config = config.as_replay(args.replay)
    if args.runs is not None:
        config = config.with_runs(args.runs)
    if args.max_infra_error_rate is not None:  # its range is checked as the option is parsed
        config = config.model_copy(update={"max_infra_error_rate": args.max_infra_error_rate})
    output = args.out or default_output(config)
    started = time.monotonic()
    if args.retry_infra and not args.resume:
        raise ConfigError("--retry-infra needs --resume (it re-runs infra errors of an existing results file)")
    fmt = _report_format(args.report) if args.report is not None else None  # before the runs, not after
    only = set(args.backend) if args.backend else None
    shard = parse_shard(args.shard) if args.shard else None
    executor = create_executor(args.executor, address=args.address, workers=args.workers)
    progress = ProgressBar(not args.no_progress, _planned(config, only, shard), output)
    footers: list[Footer] = []
    try:
        run_config(
            config,
            output,
            resume=args.resume,
            record_dir=args.record,
            retry_infra=args.retry_infra,
            progress=progress,
            only_backends=only,
            shard=shard,
            executor=executor,
            on_footer=footers.append,
        )
    except KeyboardInterrupt:
        # the message carries the resume command: the CLI prints it as the interrupted line
        raise KeyboardInterrupt(_stopped(args, output, progress.planned, config_variables(config))) from None
    finally:
        progress.close()
    from evalkit.report.terminal import summary_table  # here, not at start-up: it needs scipy

    results = scan_results([output])  # compact rows: a large run's summary needs no transcripts
    print(summary_table(results))
    print(f"\n{plural(len(results.runs), 'run')} in {output} ({time.monotonic() - started:.1f}s)")
    outage = unreachable_backends(results)
    # the report is written even when a backend was down: it shows the outage, and exit 3 follows
    if args.report is not None and fmt is not None:
        from evalkit.report import write_report
        from evalkit.report.data import build_report, results_time

        data = build_report(results, generated_at=results_time(results), root=str(Path.cwd()))
        write_report(data, args.report, fmt)
        print(f"wrote {args.report}{data.simulated_suffix}")
    if outage is not None:
        raise outage  # exit 3, with the first error text
    _check_infra(args, output, footers)
    return 0


def _check_infra(args: argparse.Namespace, output: Path, footers: list[Footer]) -> None:
    """Exit 3 (one line) when a segment this run wrote closed with too many infra errors."""
    reasons = [f.reason for f in footers if f.status == "infra_errors" and f.reason]
    if reasons:
        again = resume_command(args, output) + ("" if args.retry_infra else " --retry-infra")
        raise TooManyInfraErrors(f"{'; '.join(reasons)}; once it serves again: {again}")
