"""Harness overhead on the simulated backend: scenario runs per second and µs of harness time per call.

Runs a 4-step scenario (seq-medication-chain) under `trust_text` with the "strong" profile, so that
nearly every run is the ideal 4 model calls, in one process on one core. The simulated backend's own
work is measured separately (calling it directly with the same requests) and subtracted, so the
per-call figure is the harness: strategies, request building, mocks, checks and record building.
Results are written to a temporary file, as a real run does.

    python benchmarks/harness_overhead.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from evalkit.config import RunConfig
from evalkit.results import load_results
from evalkit.runner import run_config

ROOT = Path(__file__).resolve().parent.parent


def bench_config(runs: int) -> RunConfig:
    return RunConfig.model_validate({
        "name": "bench", "seed": 1, "runs": runs,
        "scenarios": [str(ROOT / "scenarios/sequential_reasoning/medication_chain.yaml")],
        "backends": [{"label": "sim", "kind": "sim", "model": "strong", "concurrency": 1}],
        "strategies": {"trust_text": ["trust_text"]},
    })


def backend_only_seconds(results_path: Path) -> float:
    """Time the simulated backend alone on the exact requests of the run (replayed from transcripts)."""
    from evalkit.backends.sim import SimulatedBackend
    from evalkit.chat import CallContext, ChatRequest
    from evalkit.config import BackendEntry
    from evalkit.scenario import load_scenario

    scenario = load_scenario(ROOT / "scenarios/sequential_reasoning/medication_chain.yaml")
    backend = SimulatedBackend(entry=BackendEntry(label="sim", kind="sim", model="strong"))
    tools = [t.spec() for t in scenario.tools]
    jobs = []
    for run in load_results([results_path]).runs:
        history = [m for m in run.messages]
        for call in run.calls:
            request = ChatRequest(messages=history[: call.n_messages], tools=tools)
            context = CallContext(run_id=run.run_id, seed=run.seed, call_index=call.index, offered_tools=tools,
                                  skill=scenario.skill())
            jobs.append((request, context))

    async def go() -> None:
        for request, context in jobs:
            await backend.complete(request, context)

    started = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
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


if __name__ == "__main__":
    main()
