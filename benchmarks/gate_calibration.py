"""Calibrate the regression gate by simulation: false alarms when nothing changed, power at a real drop.

One cell, N = 25 runs per side, one-sided tests at α = 0.05, as `evalkit gate` runs them.

A. Bernoulli draws, many repetitions: baseline and candidate outcomes drawn directly, decided by the
   functions the gate calls (`evalkit.stats.boschloo`, `fisher`, `mcnemar`, `holm`, one-sided), looked
   up per table. The prediction beside each rate is exact and computed independently (the report's
   power code, `two_sample_power`, uses its own Boschloo grid; McNemar by enumeration).
B. End to end, fewer repetitions: the simulated backend runs the real pipeline (`run_config` → JSONL
   → `load_results` → `evalkit.gate.compare`). Profiles written here make `rel-capital-city` under
   `trust_text` complete with exactly the rate wanted (the one random choice in such a run is the
   reply step's `unneeded_tool_call`). Many repetitions share one config as separate backend
   labels, which the runner seeds independently; each label is gated on its own (no Holm across
   repetitions). With the same config seed on both sides the runs pair up and the gate uses McNemar;
   with different seeds they do not, and it uses Boschloo.

    python benchmarks/gate_calibration.py [--reps 200000] [--e2e-reps 300] [--seed 20261122]

Not a test: it prints a table (about two minutes on two cores at the defaults).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats as sps

from evalkit import stats
from evalkit.config import RunConfig
from evalkit.gate import compare
from evalkit.gate_config import GateConfig
from evalkit.results import Results, RunRecord, load_results
from evalkit.runner import run_config

ROOT = Path(__file__).resolve().parent.parent
N = 25
ALPHA = 0.05
HOLM_CELLS = 6


@dataclass(frozen=True)
class Line:
    case: str
    test: str
    kind: str  # "false alarm" or "power"
    hits: int
    reps: int
    predicted: float

    @property
    def rate(self) -> float:
        return self.hits / self.reps

    def verdict(self) -> str:
        low, high = (stats.wilson(self.hits, self.reps).low, stats.wilson(self.hits, self.reps).high)
        agrees = low - 1e-9 <= self.predicted <= high + 1e-9
        if self.kind == "false alarm":
            return ("ok: ≤ α" if self.rate <= ALPHA else "ABOVE α") + ("" if agrees else ", off prediction")
        return "ok: as predicted" if agrees else "OFF prediction"


# --- exact predictions ---------------------------------------------------------------------------


def mcnemar_table(n: int) -> np.ndarray:
    """One-sided exact McNemar p for b lost and c gained pairs (b + c ≤ n); 1 elsewhere."""
    table = np.ones((n + 1, n + 1))
    for b in range(n + 1):
        for c in range(n + 1 - b):
            table[b, c] = stats.mcnemar(b, c)
    return table


def mcnemar_rejection(n: int, p_base: float, p_cand: float, table: np.ndarray) -> float:
    """P(McNemar rejects) for n independent pairs: b ~ P(base passes, cand fails), c the reverse."""
    lost, gained = p_base * (1 - p_cand), (1 - p_base) * p_cand
    total = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if table[b, c] <= ALPHA:
                total += float(sps.multinomial.pmf([b, c, n - b - c], n, [lost, gained, 1 - lost - gained]))
    return total


# --- A. Bernoulli draws ------------------------------------------------------------------------------


def unpaired(rng: np.random.Generator, reps: int, p_base: float, p_cand: float, table: np.ndarray) -> int:
    x_base, x_cand = rng.binomial(N, p_base, reps), rng.binomial(N, p_cand, reps)
    return int((table[x_base, x_cand] <= ALPHA).sum())


def paired(rng: np.random.Generator, reps: int, p_base: float, p_cand: float, table: np.ndarray) -> int:
    base = rng.random((reps, N)) < p_base
    cand = rng.random((reps, N)) < p_cand
    lost, gained = (base & ~cand).sum(axis=1), (cand & ~base).sum(axis=1)
    return int((table[lost, gained] <= ALPHA).sum())


def holm_family(rng: np.random.Generator, reps: int, p: float, table: np.ndarray) -> int:
    """Repetitions in which Holm across HOLM_CELLS unchanged cells flags any cell."""
    x_base, x_cand = rng.binomial(N, p, (reps, HOLM_CELLS)), rng.binomial(N, p, (reps, HOLM_CELLS))
    pvalues = table[x_base, x_cand]
    return sum(1 for row in pvalues if min(stats.holm(list(row))) <= ALPHA)


def bernoulli_part(reps: int, seed: int) -> list[Line]:
    boschloo = np.array([[stats.boschloo(a, N, b, N) for b in range(N + 1)] for a in range(N + 1)])
    fisher = np.array([[stats.fisher(a, N, b, N) for b in range(N + 1)] for a in range(N + 1)])
    mcnemar = mcnemar_table(N)
    rng = np.random.default_rng(seed)

    def power(p_base: float, p_cand: float, test: stats.TwoSampleTest = "boschloo", alpha: float = ALPHA) -> float:
        return stats.two_sample_power(N, p_base, p_cand, alpha=alpha, test=test)[0]

    size_holm = power(0.9, 0.9, alpha=ALPHA / HOLM_CELLS)
    holm_reps = max(1000, reps // 10)
    return [
        Line("no change, 100% → 100%", "Boschloo", "false alarm", unpaired(rng, reps, 1.0, 1.0, boschloo), reps,
             power(1.0, 1.0)),
        Line("no change, 90% → 90%", "Boschloo", "false alarm", unpaired(rng, reps, 0.9, 0.9, boschloo), reps,
             power(0.9, 0.9)),
        Line("no change, 90% → 90%", "Fisher", "false alarm", unpaired(rng, reps, 0.9, 0.9, fisher), reps,
             power(0.9, 0.9, "fisher")),
        Line("no change, 90% → 90%, pairs", "McNemar", "false alarm", paired(rng, reps, 0.9, 0.9, mcnemar), reps,
             mcnemar_rejection(N, 0.9, 0.9, mcnemar)),
        Line(f"no change, 90% × {HOLM_CELLS} cells, Holm", "Boschloo", "false alarm",
             holm_family(rng, holm_reps, 0.9, boschloo), holm_reps, 1 - (1 - size_holm) ** HOLM_CELLS),
        Line("drop 100% → 80%", "Boschloo", "power", unpaired(rng, reps, 1.0, 0.8, boschloo), reps,
             power(1.0, 0.8)),
        Line("drop 100% → 80%", "Fisher", "power", unpaired(rng, reps, 1.0, 0.8, fisher), reps,
             power(1.0, 0.8, "fisher")),
        Line("drop 100% → 80%, pairs", "McNemar", "power", paired(rng, reps, 1.0, 0.8, mcnemar), reps,
             mcnemar_rejection(N, 1.0, 0.8, mcnemar)),
    ]


# --- B. end to end: simulated backend, results files, the gate ----------------------------------

PROFILE = """name: calibration-{pct}
description: completes rel-capital-city under trust_text with probability {rate}
tool_step: {{correct: 1, text_instead_of_tool: 0, malformed_call: 0, hallucinated_tool: 0, wrong_arguments: 0,
             premature_answer: 0}}
reply_step: {{unneeded_tool_call: {miss}, uses_respond: 0}}
after_nudge: {{tool_step_correct: 1, reply_step_tool_call: 0, uses_respond: 0}}
"""


def write_profile(folder: Path, rate: float) -> Path:
    path = folder / f"calibration-{round(rate * 100)}.yaml"
    path.write_text(PROFILE.format(pct=round(rate * 100), rate=rate, miss=round(1 - rate, 6)), encoding="utf-8")
    return path


def simulate(profile: str, seed: int, reps: int, output: str) -> str:
    """`reps` repetitions of one cell (N runs), each under its own backend label."""
    config = RunConfig.model_validate({
        "name": Path(output).stem, "seed": seed, "runs": N,
        "scenarios": [str(ROOT / "scenarios/relevance_detection/capital_city.yaml")],
        "backends": [{"label": f"rep{i:04d}", "kind": "sim", "model": profile, "concurrency": 256}
                     for i in range(reps)],
        "strategies": {"trust_text": ["trust_text"]},
    })
    return str(run_config(config, Path(output)))


def by_label(results: Results) -> dict[str, Results]:
    groups: dict[str, list[RunRecord]] = defaultdict(list)
    for run in results.runs:
        groups[run.cell.backend].append(run)
    return {label: Results(headers=results.headers, runs=runs, paths=results.paths) for label, runs in groups.items()}


def gate_rate(baseline: Path, candidate: Path) -> tuple[int, int, str]:
    """(failed repetitions, repetitions, the test the gate used) for one-cell gates per label."""
    base, cand = by_label(load_results([baseline])), by_label(load_results([candidate]))
    config = GateConfig(alpha=ALPHA, metric="completed")
    failed, tests = 0, set()
    for label in sorted(base):
        result = compare(base[label], cand[label], config)
        (verdict,) = result.cells
        failed += not result.passed
        tests.add(verdict.test.split(",")[0].split(" (")[0].replace(" exact", ""))
    return failed, len(base), "/".join(sorted(tests))


def end_to_end_part(reps: int, seed: int, predictions: dict[str, float]) -> list[Line]:
    with tempfile.TemporaryDirectory(prefix="evalkit-calibration-") as tmp:
        folder = Path(tmp)
        profiles = {rate: str(write_profile(folder, rate)) for rate in (1.0, 0.9, 0.8)}
        jobs = {  # name: (rate, config seed)
            "100a": (1.0, seed), "100b": (1.0, seed + 1), "90a": (0.9, seed), "90b": (0.9, seed + 1),
            "80a": (0.8, seed), "80b": (0.8, seed + 1),
        }
        with ProcessPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(simulate, profiles[rate], s, reps, str(folder / f"{name}.jsonl"))
                       for name, (rate, s) in jobs.items()}
            paths = {name: Path(f.result()) for name, f in futures.items()}
        cases: list[tuple[str, str, str, str, str]] = [
            ("no change, 100% → 100%", "false alarm", "100a", "100b", "boschloo 1.0 1.0"),
            ("no change, 90% → 90%", "false alarm", "90a", "90b", "boschloo 0.9 0.9"),
            ("drop 100% → 80%", "power", "100a", "80b", "boschloo 1.0 0.8"),
            ("drop 100% → 80%, same seeds", "power", "100a", "80a", "mcnemar 1.0 0.8"),
        ]
        out = []
        for case, kind, base, cand, key in cases:
            failed, total, test = gate_rate(paths[base], paths[cand])
            out.append(Line(case, test, kind, failed, total, predictions[key]))
        return out


# --- output ----------------------------------------------------------------------------------------


def table(title: str, lines: list[Line]) -> str:
    head = f"{'case':38} {'test':10} {'reps':>7}  {'rate':>6}  {'95% interval':15} {'predicted':>9}  check"
    rows = [title, head, "-" * len(head)]
    for line in lines:
        interval = stats.wilson(line.hits, line.reps)
        rows.append(f"{line.case:38} {line.test:10} {line.reps:7d}  {line.rate:6.3f}  "
                    f"[{interval.low:.3f}, {interval.high:.3f}]  {line.predicted:9.3f}  {line.verdict()}")
    return "\n".join(rows)


def worst_case_size() -> tuple[float, float]:
    """The largest false-alarm rate of the unpaired Boschloo gate over every common true rate."""
    grid = np.linspace(0.0, 1.0, 201)
    sizes = [stats.two_sample_power(N, p, p)[0] for p in grid]
    best = int(np.argmax(sizes))
    return float(grid[best]), float(sizes[best])


def timed(label: str, action: Callable[[], list[Line]]) -> list[Line]:
    started = time.monotonic()
    lines = action()
    print(f"({label}: {time.monotonic() - started:.0f} s)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200_000, help="repetitions per case of the Bernoulli part")
    parser.add_argument("--e2e-reps", type=int, default=300, help="repetitions per case through the pipeline")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()

    print(f"Gate calibration: one cell, N = {N} runs per side, one-sided tests at α = {ALPHA}, seed {args.seed}")
    print("false alarm = the gate fails a candidate whose true rate did not change; power = it fails a real drop;")
    print("95% interval = Wilson interval of the simulated rate; predicted = exact; check: predicted inside the "
          "interval\n")
    bernoulli = timed("Bernoulli part", lambda: bernoulli_part(args.reps, args.seed))
    predictions = {"boschloo 1.0 1.0": bernoulli[0].predicted, "boschloo 0.9 0.9": bernoulli[1].predicted,
                   "boschloo 1.0 0.8": bernoulli[5].predicted, "mcnemar 1.0 0.8": bernoulli[7].predicted}
    end_to_end = timed("end-to-end part", lambda: end_to_end_part(args.e2e_reps, args.seed, predictions))
    print()
    print(table("A. Bernoulli draws, decided by evalkit.stats (the gate's tests)", bernoulli))
    print()
    print(table("B. End to end: simulated backend → results files → evalkit.gate.compare", end_to_end))
    p, size = worst_case_size()
    print(f"\nUnpaired Boschloo at N = {N}: the largest false-alarm rate over any common true rate is {size:.4f} "
          f"(at {p:.0%}), ≤ α = {ALPHA} by construction.")
    drop = bernoulli[5]
    print(f"Power at 100% → 80%: {drop.rate:.3f} simulated (Boschloo), {drop.predicted:.3f} predicted; "
          f"{stats.n_needed(1.0, 0.8).n} runs per side reach 80%.")
    print("With the same config seed on both sides the gate pairs runs and uses McNemar, which at a 100% baseline "
          f"has power {bernoulli[7].predicted:.2f}, not {drop.predicted:.2f}: pairing cannot help when the baseline "
          "never fails.")


if __name__ == "__main__":
    main()
