"""How the unpaired gate's time grows with N: `evalkit.gate.compare` on runs that do not pair.

The first measurement: 20 s at N = 25 and 495 s at N = 100 (scipy's Boschloo costs about n^2.7 per
pooled table). Here the default matrix's shape (17 scenarios × 2 modes × 6 strategies) is filled
with hand-made run records (no model runs; the outcomes are Bernoulli draws at 80%), the candidate
on other seeds so that nothing pairs, and the gate runs at each level. Printed: seconds per gate and
seconds per 1,000 runs, whose ratio across N shows the growth (flat = linear). Boschloo is exact up
to 500 runs per side of a table and Fisher mid-p above (`evalkit.stats.exact`).

The last line per N is a report's statistics (`build_report`, without the power statement) on both
sides as two models: its model comparisons do not pair, so each is a two-sided Boschloo test on
pooled cells (scipy's, before, took 13.6 s at 800 runs a side; here a pooled cell holds 17 N).

    python benchmarks/gate_scaling.py [--n 25 100 400]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalkit.chat import Sampling, Usage
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.report.data import build_report
from evalkit.results.records import Cell, Header, RunRecord
from evalkit.results.runs import Results
from evalkit.stats.exact import boschloo_table

SCENARIOS = [f"s{i:02d}" for i in range(17)]
MODES = ["native", "prompt"]
STRATEGIES = ["trust_text", "retry_nudge", "no_tools_guard", "respond_tool", "respond+nudge", "grammar"]


def records(n: int, seed_offset: int, rng: np.random.Generator, model: str = "m") -> Results:
    runs = []
    for mode in MODES:
        for strategy in STRATEGIES:
            for scenario in SCENARIOS:
                cell = Cell(
                    backend="sim",
                    model=model,
                    mode=mode,
                    strategy=strategy,
                    scenario=scenario,
                    family=f"f{int(scenario[1:]) % 4}",
                )
                for i, ok in enumerate(rng.random(n) < 0.8):
                    runs.append(
                        RunRecord.model_construct(
                            run_id=f"{model}/{mode}/{strategy}/{scenario}/{i}",
                            cell=cell,
                            index=i,
                            seed=i + seed_offset,
                            simulated=True,
                            outcome="terminal_tool" if ok else "final_answer",
                            completed=bool(ok),
                            correct=bool(ok),
                            failure=None,
                            first_try=bool(ok),
                            retries=0,
                            guard_fires=0,
                            model_calls=1,
                            iterations=1,
                            ideal_iterations=1,
                            wasted_calls=0,
                            usage=Usage(),
                            latency_s=0.0,
                            wall_s=0.0,
                            sampling=Sampling(),
                            check=[],
                            interventions=[],
                            calls=[],
                            messages=[],
                        )
                    )
    header = Header(
        evalkit_version="bench",
        git_sha="-",
        started_at="-",
        config_name="bench",
        config_hash="-",
        config={},
        seed=seed_offset,
        runs_per_cell=n,
        simulated=True,
        backends={},
    )
    return Results(headers=[header], runs=runs, paths=["synthetic"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[25, 100, 400])
    args = parser.parse_args()
    rng = np.random.default_rng(20261123)
    print(f"{'N':>5} {'level':>9} {'runs':>8}  {'seconds':>8}  {'s per 1000 runs':>15}")
    for n in args.n:
        base, cand = records(n, 0, rng), records(n, 10**6, rng)
        for level in ("scenario", "family", "cell"):
            boschloo_table.cache_clear()  # each gate pays for its own tables
            started = time.perf_counter()
            compare(base, cand, GateConfig(level=level))
            seconds = time.perf_counter() - started
            total = len(base.runs) + len(cand.runs)
            print(f"{n:5d} {level:>9} {total:8d}  {seconds:8.2f}  {1000 * seconds / total:15.4f}")
        models = records(n, 10**6, rng, model="m2")
        both = Results(headers=base.headers + models.headers, runs=base.runs + models.runs, paths=["a", "b"])
        started = time.perf_counter()
        data = build_report(both, include_power=False)
        seconds = time.perf_counter() - started
        assert any(c.test == "Boschloo exact" for c in data.comparisons)  # the unpaired path was taken
        print(f"{n:5d} {'report':>9} {len(both.runs):8d}  {seconds:8.2f}  {1000 * seconds / len(both.runs):15.4f}")


if __name__ == "__main__":
    main()
