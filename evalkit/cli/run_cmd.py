"""`evalkit run CONFIG`: run a matrix and append results; prints a summary read back from the file."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from evalkit.errors import ConfigError
from evalkit.results.integrity import unreachable_backends
from evalkit.results.shards import parse_shard
from evalkit.results.summaries import scan_results
from evalkit.run.config import load_config
from evalkit.run.executors import EXECUTORS, create_executor
from evalkit.run.matrix import iter_runs
from evalkit.run.preflight import MAX_PLANNED_RUNS
from evalkit.run.runner import default_output, load_config_scenarios, run_config

if TYPE_CHECKING:
    from evalkit.report import ReportFormat
    from evalkit.results.shards import Shard
    from evalkit.run.config import RunConfig

__all__ = ["add_parser", "run"]

_FORMATS: dict[str, ReportFormat] = {".html": "html", ".md": "markdown", ".json": "json"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a config's matrix and write a JSONL results file")
    p.add_argument("config", type=Path)
    p.add_argument("-o", "--out", type=Path, help="results file (default: the config's output, or results/NAME.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted results file, skipping finished runs")
    p.add_argument(
        "--retry-infra",
        action="store_true",
        help="with --resume: run again the runs recorded as infra_error (the new records supersede them)",
    )
    p.add_argument("--record", type=Path, metavar="DIR", help="record every backend request/response under DIR")
    p.add_argument(
        "--replay",
        type=Path,
        metavar="DIR",
        help="serve every backend from a --record DIR instead (no server); default output NAME-replay.jsonl",
    )
    p.add_argument("-n", "--runs", type=int, help="override the config's runs per cell")
    p.add_argument(
        "--backend",
        action="append",
        metavar="LABEL",
        help="run only this backend entry now (repeatable); the others stay pending for --resume",
    )
    p.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write a report of the whole results file (format from the suffix: .html, .md, .json)",
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
        "--workers", type=int, help="with --executor ray: Ray workers, one shard each (default: one per node)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar, even on a terminal")
    p.add_argument(
        "--allow-state-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="let scenarios build stateful mocks from MODULE (imports it: runs its code); repeatable",
    )
    p.set_defaults(handler=run)


class ProgressBar:
    """A one-line bar on a terminal's stderr: the whole plan (runs finished before a `--resume`
    included), the pace, an ETA and, per backend, the infra errors so far.

    The runner reports (done, total) over the runs still pending; `planned` is the whole plan, so
    the runs finished earlier are `planned - total`. Infra errors are read from the records the
    runner appends to `results` (it flushes each one), so the bar needs nothing else from it.
    """

    WIDTH = 24

    def __init__(
        self,
        enabled: bool,
        planned: int,
        results: Path | None = None,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream or sys.stderr
        self.enabled = enabled and (stream is not None or sys.stderr.isatty())
        self.planned = planned
        self.clock = clock
        self.started = clock()
        self.last = -1.0
        self.infra: Counter[str] = Counter()
        self._tail = _Tail(results) if self.enabled and results is not None else None

    def line(self, done: int, total: int) -> str:
        before = max(self.planned - total, 0)
        planned = before + total
        elapsed = self.clock() - self.started
        filled = self.WIDTH * (before + done) // max(planned, 1)
        text = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {before + done}/{planned} runs"
        if before:
            text += f" ({before} before resume)"
        if done and elapsed > 0:
            per_run = elapsed / done
            pace = f"{1 / per_run:.1f} runs/s" if per_run < 1 else f"{per_run:.1f} s/run"
            text += f"  {pace}  ETA {_clock_text(per_run * (total - done))}"
        if self.infra:
            text += "  infra errors: " + ", ".join(f"{label} {n}" for label, n in sorted(self.infra.items()))
        return text

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._tail is not None:
            self.infra.update(self._tail.infra_errors())
        now = self.clock()
        if now - self.last < 0.1 and done < total:
            return
        self.last = now
        self.stream.write(f"\r{self.line(done, total)} \033[K")  # clear what a longer line left behind
        if done >= total:
            self.stream.write("\n")
            self.close()
        self.stream.flush()

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()
            self._tail = None


class _Tail:
    """Reads the run records appended to a results file since the tail was made.

    The file is opened at the first read, not created here: the tail is made before the run's
    checks, and a start that fails them must leave no file behind."""

    def __init__(self, path: Path):
        self._path = path
        self._start = path.stat().st_size if path.is_file() else 0
        self._fh: TextIO | None = None
        self._partial = ""

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def _open(self) -> TextIO | None:
        if self._fh is None and self._path.is_file():
            self._fh = self._path.open("r", encoding="utf-8")
            self._fh.seek(min(self._start, self._path.stat().st_size))
        return self._fh

    def infra_errors(self) -> Counter[str]:
        found: Counter[str] = Counter()
        fh = self._open()
        if fh is None:
            return found
        chunk = self._partial + fh.read()
        *lines, self._partial = chunk.split("\n")
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line a resumed run cut off and rewrote
            if isinstance(record, dict) and record.get("outcome") == "infra_error":
                found[str(record.get("cell", {}).get("backend", "?"))] += 1
        return found


def _clock_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def _planned(config: RunConfig, only: set[str] | None, shard: Shard | None) -> int:
    """How many runs this invocation plans. Counted without building them, unless a shard must pick
    its runs by id, and then only for a plan `preflight` accepts: this runs before `preflight`
    refuses an oversized plan, and must not take as long as that plan is big."""
    scenarios = load_config_scenarios(config)
    entries = sum(1 for e in config.backends if only is None or e.label in only)
    total = entries * len(config.modes) * len(config.strategies) * len(scenarios) * config.runs
    if shard is None or total > MAX_PLANNED_RUNS:
        return total
    return sum(1 for _ in shard.select(iter_runs(config, scenarios, only)))  # lazily: memory stays flat


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config).allowing_state_modules(args.allow_state_module)
    if args.replay is not None:
        config = config.as_replay(args.replay)
    if args.runs is not None:
        config = config.with_runs(args.runs)
    output = args.out or default_output(config)
    started = time.monotonic()
    if args.retry_infra and not args.resume:
        raise ConfigError("--retry-infra needs --resume (it re-runs infra errors of an existing results file)")
    only = set(args.backend) if args.backend else None
    shard = parse_shard(args.shard) if args.shard else None
    executor = create_executor(args.executor, address=args.address, workers=args.workers)
    progress = ProgressBar(not args.no_progress, _planned(config, only, shard), output)
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
        )
    finally:
        progress.close()
    from evalkit.report.summary import summary_table  # here, not at start-up: it needs scipy

    results = scan_results([output])  # compact rows: a large run's summary needs no transcripts
    print(summary_table(results))
    print(f"\n{len(results.runs)} runs in {output} ({time.monotonic() - started:.1f}s)")
    outage = unreachable_backends(results)
    if args.report is not None:
        fmt = _FORMATS.get(args.report.suffix.lower())
        if fmt is None:
            raise ConfigError(f"--report {args.report}: unknown suffix (use one of {', '.join(sorted(_FORMATS))})")
        from evalkit.report import build_report, write_report

        data = build_report(results, generated_at=datetime.now(UTC).isoformat(timespec="seconds"), root=str(Path.cwd()))
        write_report(data, args.report, fmt)
        print(f"wrote {args.report}{' (SIMULATED results)' if data.simulated else ''}")
    if outage is not None:
        raise outage  # exit 3, with the first error text
    return 0
