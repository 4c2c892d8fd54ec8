"""`evalkit run CONFIG`: run a matrix and append results; prints a summary read back from the file."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from evalkit.config import load_config
from evalkit.errors import ConfigError
from evalkit.executors import EXECUTORS, create_executor
from evalkit.report import ReportFormat, build_report, write_report
from evalkit.results import load_results
from evalkit.runner import default_output, run_config
from evalkit.shards import parse_shard
from evalkit.summary import summary_table

__all__ = ["add_parser", "run"]

_FORMATS: dict[str, ReportFormat] = {".html": "html", ".md": "markdown", ".json": "json"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a config's matrix and write a JSONL results file")
    p.add_argument("config", type=Path)
    p.add_argument("-o", "--out", type=Path, help="results file (default: the config's output, or results/NAME.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted results file, skipping finished runs")
    p.add_argument("--retry-infra", action="store_true",
                   help="with --resume: run again the runs recorded as infra_error (the new records supersede them)")
    p.add_argument("--record", type=Path, metavar="DIR", help="record every backend request/response under DIR")
    p.add_argument("--replay", type=Path, metavar="DIR",
                   help="serve every backend from a --record DIR instead (no server); default output NAME-replay.jsonl")
    p.add_argument("-n", "--runs", type=int, help="override the config's runs per cell")
    p.add_argument("--backend", action="append", metavar="LABEL",
                   help="run only this backend entry now (repeatable); the others stay pending for --resume")
    p.add_argument("--report", type=Path, metavar="FILE",
                   help="also write a report of the whole results file (format from the suffix: .html, .md, .json)")
    p.add_argument("--shard", metavar="I/N",
                   help="run only shard I of N of the plan (a stable slice by run id); join them with `evalkit merge`")
    p.add_argument("--executor", choices=EXECUTORS, default="local",
                   help="where the runs execute: this process, or Ray workers (pip install 'evalkit[ray]')")
    p.add_argument("--address", help="with --executor ray: the cluster (ray://HOST:10001, or auto); default local")
    p.add_argument("--workers", type=int,
                   help="with --executor ray: Ray workers, one shard each (default: one per node)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    p.set_defaults(handler=run)


class ProgressBar:
    """A one-line bar on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        rate = done / max(now - self.started, 1e-9)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} runs  {rate:.0f}/s ")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.replay is not None:
        config = config.as_replay(args.replay)
    if args.runs:
        config = config.model_copy(update={"runs": args.runs})
    output = args.out or default_output(config)
    started = time.monotonic()
    if args.retry_infra and not args.resume:
        raise ConfigError("--retry-infra needs --resume (it re-runs infra errors of an existing results file)")
    shard = parse_shard(args.shard) if args.shard else None
    executor = create_executor(args.executor, address=args.address, workers=args.workers)
    run_config(config, output, resume=args.resume, record_dir=args.record, retry_infra=args.retry_infra, shard=shard,
               executor=executor,
               progress=ProgressBar(not args.no_progress), only_backends=set(args.backend) if args.backend else None)
    results = load_results([output])
    print(summary_table(results))
    print(f"\n{len(results.runs)} runs in {output} ({time.monotonic() - started:.1f}s)")
    if args.report is not None:
        fmt = _FORMATS.get(args.report.suffix.lower())
        if fmt is None:
            raise ConfigError(f"--report {args.report}: unknown suffix (use one of {', '.join(sorted(_FORMATS))})")
        data = build_report(results, generated_at=datetime.now(UTC).isoformat(timespec="seconds"))
        write_report(data, args.report, fmt)
        print(f"wrote {args.report}{' (SIMULATED results)' if data.simulated else ''}")
    return 0
