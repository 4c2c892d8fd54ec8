"""Harness overhead: scenario runs per second and harness CPU per model call, simulated and over HTTP.

Runs a 4-step scenario (seq-medication-chain) under `trust_text`, in one process, twice:

1. on the simulated backend ("strong" profile, so nearly every run is the ideal 4 calls). Its own
   work is measured separately (calling it directly with the same requests) and subtracted, so the
   per-call figure is the harness: strategies, request building, mocks, checks and record building;
2. against the stub OpenAI server of `benchmarks/stub_server.py` (its own process, replaying the
   scenario's reference calls) through `kind: openai`, at concurrency 1 and 32: the whole HTTP path
   (payload, httpx, response parsing). CPU per call is this process's user+system CPU over the
   requests the stub counted. The stub's own ceiling (requests/s to raw sockets) is printed beside it,
   so the stub is never the bottleneck unnoticed. Then the transport alone: CPU per JSON call on
   httpx's own transport beside the runner's client (httpx on aiohttp's transport), alternating in
   the same run.

Results are written to a temporary file, as a real run does. The figures are evalkit's alone:
`benchmarks/vs_inspect.py` runs inspect_ai beside it against the same stub.

    python benchmarks/harness_overhead.py [--runs 2000] [--http-runs 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios/sequential_reasoning/medication_chain.yaml"


def bench_config(runs: int) -> RunConfig:
    return RunConfig.model_validate(
        {
            "name": "bench",
            "seed": 1,
            "runs": runs,
            "scenarios": [str(SCENARIO)],
            "backends": [{"label": "sim", "kind": "sim", "model": "strong", "concurrency": 1}],
            "strategies": {"trust_text": ["trust_text"]},
        }
    )


def http_config(url: str, runs: int, concurrency: int) -> RunConfig:
    return RunConfig.model_validate(
        {
            "name": "bench-http",
            "seed": 1,
            "runs": runs,
            "scenarios": [str(SCENARIO)],
            "backends": [{"label": "stub", "kind": "openai", "model": "stub", "url": url, "concurrency": concurrency}],
            "strategies": {"trust_text": ["trust_text"]},
        }
    )


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def http_path(runs: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from stub_server import StubServer

    with StubServer(SCENARIO) as stub, tempfile.TemporaryDirectory() as tmp:
        print(f"stub ceiling:        {stub.ceiling():.0f} requests/s (raw keep-alive sockets, 8 connections)")
        for concurrency in (1, 32):
            before = stub.requests()
            cpu, started = _cpu(), time.perf_counter()
            run_config(http_config(stub.url, runs, concurrency), Path(tmp) / f"http-{concurrency}.jsonl")
            wall, cpu = time.perf_counter() - started, _cpu() - cpu
            requests = stub.requests() - before
            print(
                f"HTTP, concurrency {concurrency:>2}: {runs / wall:6.1f} scenario runs/s, {requests / wall:6.0f} "
                f"requests/s, {cpu / requests * 1e3:.2f} ms CPU per call ({requests} requests)"
            )
        transports(stub.url)


def transports(url: str, calls: int = 2000) -> None:
    """The transport alone: CPU per `post_json` call on httpx's own transport and on the runner's
    `pooled_client` (httpx on aiohttp's transport), alternating, in this one run."""
    import httpx

    from evalkit.backends._http import pooled_client, post_json

    payload = {"model": "stub", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}

    async def cpu_per_call(make: Callable[[], httpx.AsyncClient]) -> float:
        client = make()
        await post_json(client, url + "/chat/completions", payload)  # connect outside the timing
        cpu = _cpu()
        for _ in range(calls):
            await post_json(client, url + "/chat/completions", payload)
        cpu = _cpu() - cpu
        await client.aclose()
        return cpu / calls

    found: dict[str, list[float]] = {"httpx": [], "aiohttp": []}
    for _ in range(3):
        found["httpx"].append(asyncio.run(cpu_per_call(lambda: httpx.AsyncClient(timeout=30))))
        found["aiohttp"].append(asyncio.run(cpu_per_call(lambda: pooled_client(1, 30))))
    plain, lean = min(found["httpx"]), min(found["aiohttp"])
    print(
        f"transport alone:     httpx {plain * 1e3:.2f} ms, pooled_client (aiohttp) {lean * 1e3:.2f} ms CPU per call "
        f"(best of 3 x {calls}): {plain / lean:.2f}x less"
    )


def backend_only_seconds(results_path: Path) -> float:
    """Time the simulated backend alone on the exact requests of the run (replayed from transcripts)."""
    from evalkit.backends.entry import BackendEntry
    from evalkit.backends.sim import SimulatedBackend
    from evalkit.chat import CallContext, ChatRequest
    from evalkit.scenario.model import load_scenario

    scenario = load_scenario(SCENARIO)
    backend = SimulatedBackend(entry=BackendEntry(label="sim", kind="sim", model="strong"))
    tools = [t.spec() for t in scenario.tools]
    jobs = []
    for run in load_results([results_path]).runs:
        history = [m for m in run.messages]
        for call in run.calls:
            request = ChatRequest(messages=history[: call.n_messages], tools=tools)
            context = CallContext(
                run_id=run.run_id, seed=run.seed, call_index=call.index, offered_tools=tools, skill=scenario.skill()
            )
            jobs.append((request, context))

    async def go() -> None:
        for request, context in jobs:
            await backend.complete(request, context)

    started = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs on the simulated backend")
    parser.add_argument("--http-runs", type=int, default=300, help="runs against the stub, per concurrency")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.jsonl"
        started = time.perf_counter()
        run_config(bench_config(args.runs), out)
        total = time.perf_counter() - started
        results = load_results([out])
        calls = sum(r.model_calls for r in results.runs)
        backend = backend_only_seconds(out)
    harness = total - backend
    print(f"scenario runs:       {len(results.runs)} ({calls} model calls, {calls / len(results.runs):.2f} per run)")
    print(f"wall time:           {total:.2f} s  ->  {len(results.runs) / total:.0f} scenario runs/s")
    print(f"simulated backend:   {backend:.2f} s ({backend / calls * 1e6:.0f} µs per call)")
    print(f"harness per call:    {harness / calls * 1e6:.0f} µs (everything but the backend)")
    print("target: >= 500 scenario runs/s on one core for a 4-step scenario")
    if args.http_runs > 0:
        http_path(args.http_runs)
        print("target: < 1 ms of CPU per call over HTTP, and runs/s rising with concurrency")


if __name__ == "__main__":
    main()
