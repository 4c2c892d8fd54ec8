"""evalkit beside inspect_ai against the same stub OpenAI server: runs/s, CPU per call and the ratio.

Both harnesses run the 4-step scenario seq-medication-chain against one stub server
(`benchmarks/stub_server.py`, its own process, replaying the scenario's reference calls): evalkit
through `kind: openai` under `trust_text`, inspect_ai through its OpenAI-compatible provider
(`openai-api`) with the equivalent task of `benchmarks/inspect_task.py`. Each side runs in its own
fresh process (spawned, so one harness's imports cannot touch the other's), does a short warm-up
that is not measured, then the same number of runs at concurrency 1 and 32. Requests are counted at
the stub; CPU per call is that process's user+system CPU (all its threads) during the measured runs over those
requests. Each side's runs are checked (correct verdicts / scores), so both took the ideal path.

inspect_ai is an optional peer, not a dependency of evalkit: `pip install inspect_ai openai`.
Without it, evalkit's figures are printed alone and inspect_ai is reported as skipped.

    python benchmarks/vs_inspect.py [--runs 200] [--concurrency 1 32]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing as mp
import os
import queue
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "scenarios/sequential_reasoning/medication_chain.yaml"
WARMUP_RUNS = 4


@dataclass(frozen=True)
class Measure:
    harness: str
    concurrency: int
    runs: int
    correct: int
    wall_s: float
    cpu_s: float
    requests: int

    @property
    def runs_per_s(self) -> float:
        return self.runs / self.wall_s

    @property
    def cpu_ms_per_call(self) -> float:
        return self.cpu_s / self.requests * 1e3 if self.requests else float("nan")


def _stub_requests(url: str) -> int:
    stats = url.removesuffix("/v1") + "/stats"
    with urllib.request.urlopen(stats, timeout=10) as response:
        count: int = json.loads(response.read())["requests"]
    return count


def _evalkit_runs(url: str, runs: int, concurrency: int, tmp: Path) -> int:
    sys.path.insert(0, str(HERE))
    from harness_overhead import http_config

    from evalkit.results.reader import load_results
    from evalkit.run.runner import run_config

    out = tmp / f"evalkit-{runs}-{concurrency}.jsonl"
    run_config(http_config(url, runs, concurrency), out)
    return sum(1 for run in load_results([out]).runs if run.correct)


def _inspect_runs(url: str, runs: int, concurrency: int, tmp: Path) -> int:
    sys.path.insert(0, str(HERE))
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from inspect_task import scenario_task

    model = get_model("openai-api/stub/stub", base_url=url, api_key="stub", memoize=False)
    [log] = inspect_eval(
        scenario_task(SCENARIO, runs),
        model=model,
        log_dir=str(tmp / f"inspect-{concurrency}"),
        display="none",
        max_connections=concurrency,
        max_samples=concurrency,
    )
    if log.status != "success":
        message = log.error.message if log.error else "no error recorded"
        raise RuntimeError(f"inspect_ai eval ended {log.status}: {message}")
    return sum(1 for sample in log.samples or [] if sample.scores and next(iter(sample.scores.values())).value == "C")


_DRIVERS = {"evalkit": _evalkit_runs, "inspect_ai": _inspect_runs}


def _child(harness: str, url: str, runs: int, concurrencies: list[int], out: Any) -> None:
    """One harness in its own process: warm up, then measure each concurrency; results go to `out`."""
    drive = _DRIVERS[harness]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        drive(url, WARMUP_RUNS, 1, tmp)  # imports, lazy registries, first connection: not measured
        for concurrency in concurrencies:
            before = _stub_requests(url)
            cpu, started = time.process_time(), time.perf_counter()
            correct = drive(url, runs, concurrency, tmp)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            requests = _stub_requests(url) - before
            out.put(Measure(harness, concurrency, runs, correct, wall, cpu, requests))
    out.put(None)


def measure(harness: str, url: str, runs: int, concurrencies: list[int]) -> list[Measure]:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    process = ctx.Process(target=_child, args=(harness, url, runs, concurrencies, out), daemon=True)
    process.start()
    results: list[Measure] = []
    deadline = time.monotonic() + 1800  # bounded even if the child hangs
    while time.monotonic() < deadline:
        try:
            item = out.get(timeout=2)
        except queue.Empty:
            if not process.is_alive():
                raise RuntimeError(f"{harness} benchmark process exited with {process.exitcode}") from None
            continue
        if item is None:
            process.join(timeout=60)
            return results
        results.append(item)
    process.terminate()
    raise RuntimeError(f"{harness} benchmark did not finish in 30 minutes")


def _line(m: Measure) -> str:
    return (
        f"{m.harness:<10} concurrency {m.concurrency:>2}: {m.runs_per_s:6.1f} runs/s, {m.requests:>5} requests "
        f"at the stub, {m.cpu_ms_per_call:5.2f} ms CPU per call, {m.correct}/{m.runs} correct"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per harness and concurrency (bounded: 10..2000)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 32])
    args = parser.parse_args()
    runs = min(max(args.runs, 10), 2000)
    sys.path.insert(0, str(HERE))
    from stub_server import StubServer

    harnesses = ["evalkit"]
    if importlib.util.find_spec("inspect_ai") and importlib.util.find_spec("openai"):
        harnesses.append("inspect_ai")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load} (1/5/15 min) at the start")
    with StubServer(SCENARIO) as stub:
        ceiling = stub.ceiling()
        print(f"stub ceiling: {ceiling:.0f} requests/s (raw keep-alive sockets, 8 connections)", flush=True)
        measures = {}
        for harness in harnesses:
            for m in measure(harness, stub.url, runs, args.concurrency):
                measures[harness, m.concurrency] = m
                print(_line(m), flush=True)
    busiest = max(m.requests / m.wall_s for m in measures.values())
    print(f"stub load: at most {busiest:.0f} requests/s, {busiest / ceiling:.1%} of its ceiling")
    if "inspect_ai" not in harnesses:
        print("inspect_ai: skipped (not installed; pip install inspect_ai openai)")
        return
    for concurrency in args.concurrency:
        ours, theirs = measures["evalkit", concurrency], measures["inspect_ai", concurrency]
        cpu_ratio = ours.cpu_ms_per_call / theirs.cpu_ms_per_call
        print(
            f"evalkit/inspect_ai at concurrency {concurrency:>2}: {ours.runs_per_s / theirs.runs_per_s:.1f}x runs/s, "
            f"{cpu_ratio:.3f}x CPU per call (inspect_ai spends {1 / cpu_ratio:.1f}x evalkit's)"
        )


if __name__ == "__main__":
    main()
