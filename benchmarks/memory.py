"""Peak memory and wall time of `run`, `report` and `gate` on the default matrix as N grows.

For each N (runs per cell) the default matrix (configs/default.yaml, the simulated backend: SIMULATED
results) is written to a temporary directory by `python -m evalkit run -n N`; then `report` (HTML)
and `gate` (the file against itself: paired) read it. Each command runs in a child process of its
own, and its peak RSS is the child's `ru_maxrss` from `os.wait4`. Beside them: the time of a plain
`json.loads` pass over the file (this process), the ratio of `report` to it, and the marginal ratio
against the smallest N (what the growth of the file costs `report`, against what it costs `json.loads`).
`report` runs twice: as it runs here (where the machine has a second CPU, a forked process draws half
of its plots) and with all its plots drawn in one process, as on a machine with one CPU.

    python benchmarks/memory.py                 # N = 25 and 100
    python benchmarks/memory.py --large         # also N = 400 (81,600 runs, ~400 MB; several minutes)
    python benchmarks/memory.py --sizes 25 50
    python benchmarks/memory.py --huge          # 1,000,000 records of the default matrix, in /tmp

`--huge` writes 1,000,000 run records of the default matrix (204 cells × 4,902 runs) to a file under
/tmp, made from one real run of the matrix (5 runs a cell, the simulated backend) whose records are
repeated with new run indices (running a million simulated runs would take an hour and measure the
runner, not the readers). It prints the peak RSS and the wall time of `report` and `gate` (the file
against itself), a `json.loads` pass over the file, and the ratios; the goal (issue 30) is each
under 500 MB and under 3 × the `json.loads` pass. The file is deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "default.yaml"
LARGE = 400
HUGE = 1_000_000  # run records
TIMEOUT_S = 1800  # one command; a bound, not an expectation
GOAL_MB, GOAL_RATIO = 500, 3.0


@dataclass(frozen=True)
class Measure:
    peak_mb: float
    wall_s: float


# `evalkit` with a second thread alive, so that `report` draws all its plots in one process
# (evalkit.report.forked forks only when no other thread runs): its time on a machine with one CPU
_ONE_PROCESS = (
    "import sys, threading; threading.Thread(target=threading.Event().wait, daemon=True).start(); "
    "from evalkit.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _child(args: list[str], cwd: Path, *, one_process: bool = False) -> Measure:
    """Run `python -m evalkit ARGS` and return its own peak RSS (not the largest child's so far)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    launcher = ["-c", _ONE_PROCESS] if one_process else ["-m", "evalkit"]
    proc = subprocess.Popen(
        [sys.executable, *launcher, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = start + TIMEOUT_S
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            raise SystemExit(f"evalkit {' '.join(args)}: still running after {TIMEOUT_S} s")
        time.sleep(0.05)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):  # gate exits 1 on a regression; anything else is a failure
        raise SystemExit(f"evalkit {' '.join(args)}: exit {proc.returncode}: {err.strip()[-500:]}")
    return Measure(usage.ru_maxrss / 1024, wall)  # ru_maxrss is in KiB on Linux


def _json_pass(path: Path) -> float:
    start = time.perf_counter()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            json.loads(line)
    return time.perf_counter() - start


@dataclass(frozen=True)
class Row:
    n: int
    runs: int
    file_mb: float
    run: Measure
    report: Measure
    report_one: Measure  # report drawing its plots in one process
    gate: Measure
    json_s: float


def measure(n: int, workdir: Path) -> Row:
    results = workdir / f"default-n{n}.jsonl"
    run = _child(["run", str(CONFIG), "-n", str(n), "-o", str(results), "--no-progress"], workdir)
    report = _child(["report", str(results), "-o", str(workdir / f"report-n{n}.html")], workdir)
    report_one = _child(["report", str(results), "-o", str(workdir / f"report-n{n}.html")], workdir, one_process=True)
    gate = _child(["gate", "--baseline", str(results), "--candidate", str(results)], workdir)
    with open(results, encoding="utf-8") as fh:
        runs = sum(1 for line in fh if line.startswith('{"type":"run"'))
    row = Row(n, runs, results.stat().st_size / 1e6, run, report, report_one, gate, _json_pass(results))
    results.unlink()  # the next N needs the space more than this file
    return row


def _line(row: Row, first: Row | None) -> str:
    ratio = row.report.wall_s / row.json_s
    marginal = ""
    if first is not None and row.json_s > first.json_s:
        marginal = f"{(row.report.wall_s - first.report.wall_s) / (row.json_s - first.json_s):7.2f}"
    return (
        f"{row.n:>4} {row.runs:>7} {row.file_mb:>7.0f} "
        f"{row.run.peak_mb:>7.0f} {row.run.wall_s:>6.1f} "
        f"{row.report.peak_mb:>7.0f} {row.report.wall_s:>6.1f} "
        f"{row.gate.peak_mb:>7.0f} {row.gate.wall_s:>6.1f} "
        f"{row.json_s:>6.2f} {ratio:>6.2f} {marginal:>7} "
        f"{row.report_one.wall_s:>6.1f} {row.report_one.wall_s / row.json_s:>6.2f}"
    )


def write_huge(folder: Path, records: int = HUGE) -> tuple[Path, int]:
    """A results file of `records` runs of the default matrix (see the module's docstring)."""
    seed_file = folder / "seed.jsonl"
    _child(["run", str(CONFIG), "-n", "5", "-o", str(seed_file), "--no-progress"], folder)
    lines = seed_file.read_text(encoding="utf-8").splitlines()
    header, runs = json.loads(lines[0]), [json.loads(line) for line in lines[1:-1]]
    cells: dict[str, list[dict[str, object]]] = {}
    for run in runs:
        cells.setdefault(str(run["run_id"]).rsplit("/", 1)[0], []).append(run)
    per_cell = -(-records // len(cells))
    header["runs_per_cell"] = per_cell
    path = folder / "huge.jsonl"
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        for prefix, runs_of_cell in cells.items():
            # each run's line, with its run id and index as markers to replace
            templates = [
                json.dumps(run | {"run_id": "@RUN@", "index": -999_999_991}, separators=(",", ":"))
                for run in runs_of_cell
            ]
            for i in range(per_cell):
                line = templates[i % len(templates)].replace('"@RUN@"', json.dumps(f"{prefix}/{i}"))
                out.write(line.replace("-999999991", str(i), 1) + "\n")
            written += per_cell
        footer = json.loads(lines[-1]) | {"runs_written": written}
        out.write(json.dumps(footer, separators=(",", ":")) + "\n")
    seed_file.unlink()
    return path, written


def huge() -> int:
    with tempfile.TemporaryDirectory(prefix="evalkit-huge-", dir="/tmp") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        path, runs = write_huge(folder)
        print(
            f"wrote {runs:,} run records ({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - started:.0f} s"
        )
        json_s = _json_pass(path)
        report = _child(["report", str(path), "-o", str(folder / "huge.html")], folder)
        gate = _child(["gate", "--baseline", str(path), "--candidate", str(path)], folder)
    print(f"json.loads pass over the file: {json_s:.1f} s")
    ok = True
    for name, m in (("report", report), ("gate", gate)):
        ratio = m.wall_s / json_s
        meets = m.peak_mb < GOAL_MB and ratio < GOAL_RATIO
        ok &= meets
        print(
            f"{name}: peak {m.peak_mb:.0f} MB, {m.wall_s:.1f} s = {ratio:.2f} × the json.loads pass "
            f"(goal: < {GOAL_MB} MB and < {GOAL_RATIO:g} ×): {'met' if meets else 'NOT MET'}"
        )
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25, 100], help="runs per cell (default 25 100)")
    parser.add_argument("--large", action="store_true", help=f"also N = {LARGE} (several minutes, ~400 MB of disk)")
    parser.add_argument("--huge", action="store_true", help=f"only {HUGE:,} records (about 5 GB of disk in /tmp)")
    args = parser.parse_args()
    if args.huge:
        return huge()
    sizes = sorted(set(args.sizes) | ({LARGE} if args.large else set()))
    print("default matrix, simulated backend (SIMULATED results); peak RSS of each command's own process")
    if LARGE not in sizes:
        print(f"skipped N = {LARGE} (pass --large to include it)")
    print("   N    runs file_MB run_MB  run_s rep_MB  rep_s gateMB gate_s json_s rep/js  margin  rep1_s r1/js")
    first: Row | None = None
    with tempfile.TemporaryDirectory(prefix="evalkit-memory-") as tmp:
        for n in sizes:
            row = measure(n, Path(tmp))
            print(_line(row, first), flush=True)
            first = first or row
    print(
        "rep/js: report wall time / a json.loads pass over the file; margin: the same for the growth "
        "from the smallest N (report's added time / json.loads's added time); rep1_s, r1/js: report with "
        "its plots drawn in one process (as on a machine with one CPU)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
