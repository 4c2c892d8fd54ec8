"""Calibrate the regression gate: false alarms when nothing changed, power at real drops, runs saved.

0. ASSERTED (the script exits 1 when one fails; `--quick` runs only these, on a smaller grid, and
   tests/gate/test_calibration.py runs `--quick` in CI): every test the gate can run keeps its size
   at every grid point (its rejection region summed with scipy's laws on the null's boundary), and
   `evalkit plan`'s runs reach 80% power for the test that will run in every mode
   (`benchmarks/calibration_checks.py` says how, and which grid).

Prints, at α = 0.05 and the default N = 25 runs per cell:

1. Family-wise false alarm of the fixed-N gate (Holm across m scenario cells) and of `--sequential`
   (curtailed fixed-N test at α/m against a 25-run baseline) with m = 6, 48, 170 unchanged cells, at
   several true rates. Exact (cells independent: 1 − Π(1 − per-cell size)), with a Bernoulli
   simulation beside the fixed-N figures and the sequential one at m = 6.
2. Power to catch the issue-8 candidate (`retry_nudge: {max_retries: 1}` and a new nudge text) on
   the default matrix, end to end: the simulated backend runs the retry_nudge column of
   `configs/default.yaml` and its variant under `--seeds` config seeds; each pair is gated as
   `evalkit gate` does at its defaults (scenario cells, `correct`, McNemar on seed-paired runs, Holm
   across all 187 cells of the matrix). The other columns are unchanged and, on seed-paired simulated
   runs, identical (p = 1), so they enter Holm's correction as ones.
3. No false failure from infra errors in one scenario: the same baseline runs with one scenario's runs
   turned into infra errors (5.9% of the column: allowed), gated against a rerun (paired) and against
   another seed (unpaired) at every level.
4. Exact power at N = 343 for 0.95 → 0.9 (where the old normal approximation said 0.80), and the N
   that reaches 80%.
5. `--sequential`: average runs per cell to a verdict against the 50 of the fixed-N test it curtails,
   with nothing changed and at drops of 15, 30 and 45 points, and its power beside that test's.

6. One Holm family: the family-wise false alarm with `--floor` and with `--margin 0.05` at 6, 48
   and 170 cells (exact at N = 25; the margin test is Chan's exact test).
7. Power for a single-cell drop 0.95 → 0.80 and a uniform 5-point drop at N = 25 and 100, per cell
   and with `--stratified` (Cochran–Mantel–Haenszel, simulated).
8. The share of unchanged cells with "not enough evidence" under `--margin` 0.05 and 0.1 (exact:
   the within test's own region).
9. `evalkit plan`'s runs per side for a 10-point drop over the default matrix's 187 cells, and the
   gate's exact power there.
10. A fitted profile as a realistic model: SmolLM2's cells of `results/compare-models.jsonl`, their
   rates drawn from `fitted/smollm2`'s posterior (uneven rates, moving together), as the null (the
   family-wise false alarm at N = 25) and the alternative (a 30-point drop in every cell that can
   drop so far: each cell's power, and the chance that every one is caught).

    python benchmarks/gate_calibration.py [--quick] [--seeds 12] [--infra-seeds 2] [--reps 20000] [--seed 20261123]

`--quick` runs section 0 only, on its quick grid (about a minute on two idle cores).

SIMULATED model outcomes throughout. About three minutes on two busy cores at the defaults (each
end-to-end seed runs 850 simulated runs per side).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats as sps

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.plan import runs_for_drop as plan_runs
from evalkit.results.reader import load_results
from evalkit.results.runs import Results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.runner import run_config
from evalkit.stats import proportions, pvalues, sample_size
from evalkit.stats.exact import unpaired_pvalues
from evalkit.stats.gate_tests import REGISTRY, select
from evalkit.stats.stopping_rule import CellRule, cell_rule, decide, operating_characteristics
from evalkit.stats.stratified import cmh

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_checks import GRIDS, SizeRow, plan_rows, size_rows

ROOT = Path(__file__).resolve().parent.parent
N, ALPHA, MAX_RUNS, BATCH = 25, 0.05, 50, 5
DROPS = (0.15, 0.3, 0.45)
CELLS = (6, 48, 170)
RATES = (0.5, 0.8, 0.9, 0.95, 0.99)
MATRIX_CELLS = 187  # scenario cells of configs/default.yaml that run (17 scenarios × 2 modes × 6 − 17 grammar)


def mcnemar_table(n: int) -> np.ndarray:
    table = np.ones((n + 1, n + 1))
    for b in range(n + 1):
        for c in range(n + 1 - b):
            table[b, c] = pvalues.mcnemar(b, c)
    return table


# --- 1. family-wise false alarm ----------------------------------------------------------------------


def fixed_cell_size(p: float, m: int, paired: bool) -> float:
    """P(a cell's one-sided p ≤ α/m) with nothing changed: Holm flags any cell only then."""
    if paired:
        return sample_size.mcnemar_power(N, p, p, alpha=ALPHA / m)
    return sample_size.two_sample_power(N, p, p, alpha=ALPHA / m)[0]


def simulated_fixed(p: float, m: int, reps: int, rng: np.random.Generator, tables: dict[str, np.ndarray]) -> float:
    """Repetitions in which Holm across m unchanged cells flags any cell (Bernoulli draws)."""
    base, cand = rng.random((reps, m, N)) < p, rng.random((reps, m, N)) < p
    lost, gained = (base & ~cand).sum(axis=2), (cand & ~base).sum(axis=2)
    return float((tables["mcnemar"][lost, gained] <= ALPHA / m).any(axis=1).mean())


def sequential_cell(p_base: float, p_cand: float, m: int) -> tuple[float, float]:
    """(P(regression), expected runs) of one cell, exactly, over the 25-run baseline's binomial."""
    reject = runs = 0.0
    looks = -(-MAX_RUNS // BATCH) - 1
    for x in range(N + 1):
        weight = float(sps.binom.pmf(x, N, p_base))
        if weight > 1e-12:
            rule = cell_rule(x, N, MAX_RUNS, ALPHA / m, looks=looks)
            r, n = operating_characteristics(rule, p_cand, BATCH)
            reject, runs = reject + weight * r, runs + weight * n
    return reject, runs


def simulated_sequential(p: float, m: int, reps: int, rng: np.random.Generator) -> float:
    looks = -(-MAX_RUNS // BATCH) - 1
    rules = {x: cell_rule(x, N, MAX_RUNS, ALPHA / m, looks=looks) for x in range(N + 1)}
    alarms = 0
    for _ in range(reps):
        bases = rng.binomial(N, p, m)
        outcomes = rng.random((m, MAX_RUNS)) < p
        alarms += any(_sequential_run(rules[int(x)], row) for x, row in zip(bases, outcomes, strict=True))
    return alarms / reps


def _sequential_run(rule: CellRule, row: np.ndarray) -> bool:
    for seen in range(BATCH, MAX_RUNS + 1, BATCH):
        passes = int(row[:seen].sum())
        decision = decide(rule, passes, seen - passes, interim=seen < MAX_RUNS)
        if decision != "continue":
            return decision.startswith("regression")
    return False


def false_alarms(reps: int, rng: np.random.Generator) -> list[str]:
    tables = {"mcnemar": mcnemar_table(N)}
    lines = [
        f"{'cells':>5} {'true rate':>9}  {'fixed, pairs':>12} {'(simulated)':>11}  {'fixed, unpaired':>15}  "
        f"{'sequential':>10} {'(simulated)':>11}  check"
    ]
    for m in CELLS:
        for p in RATES:
            paired = 1 - (1 - fixed_cell_size(p, m, True)) ** m
            unpaired = 1 - (1 - fixed_cell_size(p, m, False)) ** m
            seq = 1 - (1 - sequential_cell(p, p, m)[0]) ** m
            sim = simulated_fixed(p, m, max(1000, reps // m), rng, tables)
            sim_seq = f"{simulated_sequential(p, m, reps // 20, rng):11.4f}" if m == CELLS[0] else " " * 11
            ok = "ok: ≤ α" if max(paired, unpaired, seq) <= ALPHA else "ABOVE α"
            lines.append(f"{m:5d} {p:9.2f}  {paired:12.4f} {sim:11.4f}  {unpaired:15.4f}  {seq:10.4f} {sim_seq}  {ok}")
    return lines


# --- 2 and 3. end to end on the default matrix --------------------------------------------------------


def column(config: RunConfig, variant: bool) -> RunConfig:
    nudge: list[object] = (
        ["retry_nudge"]
        if not variant
        else [{"retry_nudge": {"max_retries": 1, "message": "That was not a tool call. Use a tool."}}]
    )
    return config.model_copy(update={"strategies": {"retry_nudge": nudge}, "name": "one-retry" if variant else "base"})


def run_column(config: RunConfig, seed: int, folder: Path) -> Results:
    path = folder / f"{config.name}-{seed}.jsonl"
    return load_results([run_config(config.model_copy(update={"seed": seed}), path)])


def holm_fails(result_p: list[float], m: int) -> bool:
    return min(pvalues.holm(result_p + [1.0] * (m - len(result_p)))) <= ALPHA


def with_infra(results: Results, scenario: str) -> Results:
    runs = [
        r.model_copy(update={"outcome": "infra_error", "completed": False, "correct": False, "failure": None})
        if r.cell.scenario == scenario
        else r
        for r in results.runs
    ]
    return Results(headers=results.headers, runs=runs, paths=results.paths)


def infra_failures(base: Results, other: Results) -> int:
    """Gates (paired and unpaired × 3 levels) that fail when one scenario's baseline runs are infra errors."""
    broken = with_infra(base, "seq-shipping-eta")
    return sum(
        not compare(broken, candidate, GateConfig(level=level)).passed
        for candidate in (base, other)
        for level in ("scenario", "family", "cell")
    )


def end_to_end(seeds: int, infra_seeds: int, seed: int) -> list[str]:
    default = load_config(ROOT / "configs/default.yaml")
    base_cfg, cand_cfg = column(default, False), column(default, True)
    caught = infra_fail = 0
    with tempfile.TemporaryDirectory(prefix="evalkit-calibration-") as tmp:
        for k in range(seeds):
            base = run_column(base_cfg, seed + k, Path(tmp))
            cand = run_column(cand_cfg, seed + k, Path(tmp))
            caught += holm_fails([v.p for v in compare(base, cand).cells], MATRIX_CELLS)
            if k < infra_seeds:
                infra_fail += infra_failures(base, run_column(base_cfg, seed + k + 10_000, Path(tmp)))
    low, high = (proportions.wilson(caught, seeds).low, proportions.wilson(caught, seeds).high)
    return [
        f"2. max_retries: 1 candidate, default gate (scenario cells, correct, Holm across {MATRIX_CELLS}): "
        f"caught in {caught} of {seeds} seeds = {caught / seeds:.2f} (95% Wilson [{low:.2f}, {high:.2f}])",
        f"3. infra errors in one scenario (all 50 seq-shipping-eta baseline runs): the gate failed "
        f"{infra_fail} of {6 * infra_seeds} comparisons (paired and unpaired × 3 levels × {infra_seeds} seeds)"
        + (" — ok: no false failure" if infra_fail == 0 else " — FALSE FAILURES"),
    ]


# --- 4 and 5 -------------------------------------------------------------------------------------------


def exact_power_line() -> str:
    power, _ = sample_size.two_sample_power(343, 0.95, 0.9)
    needed = sample_size.n_needed(0.95, 0.9)
    return (
        f"4. 0.95 → 0.9, Boschloo one-sided at α = {ALPHA}: exact power at N = 343 is {power:.3f} (the normal "
        f"approximation's N = {sample_size.approx_n(0.95, 0.9)} claims 0.80); {needed.n} runs per side reach "
        f"{needed.power:.3f}"
    )


def fixed_power(p_base: float, p_cand: float, m: int) -> float:
    """Power of the fixed-N test the sequential gate curtails: 25 baseline runs, 50 candidate runs, α/m."""
    grid = unpaired_pvalues(N, MAX_RUNS) <= ALPHA / m
    return float(
        np.outer(sps.binom.pmf(range(N + 1), N, p_base), sps.binom.pmf(range(MAX_RUNS + 1), MAX_RUNS, p_cand))[
            grid
        ].sum()
    )


def sequential_lines() -> list[str]:
    lines = [
        f"{'cells':>5} {'baseline':>8} {'drop':>5}  {'runs, no change':>15} {'ratio':>6}  {'runs, drop':>10} "
        f"{'ratio':>6}  {'power seq.':>10} {'power fixed':>11}"
    ]
    for m in CELLS:
        for p in (0.95, 1.0):
            _, same = sequential_cell(p, p, m)
            for drop in DROPS:
                power, dropped = sequential_cell(p, p - drop, m)
                lines.append(
                    f"{m:5d} {p:8.2f} {drop:5.2f}  {same:15.1f} {same / MAX_RUNS:6.2f}  {dropped:10.1f} "
                    f"{dropped / MAX_RUNS:6.2f}  {power:10.3f} {fixed_power(p, p - drop, m):11.3f}"
                )
    return lines


# --- 6-9. one family, margin, power, evidence, plan ---------------------------------------------------


def _pmf(p: float, n: int = N) -> np.ndarray:
    return sps.binom.pmf(np.arange(n + 1), n, p)


def family_lines() -> list[str]:
    """Exact: Holm flags any test iff the least p is ≤ α/K (K tests); cells independent."""
    lines = []
    for p in (0.8, 0.9, 0.95):
        cells = []
        for m in CELLS:
            k = 2 * m  # each cell's drop test and its floor test (floor = the true rate)
            limit = REGISTRY["boschloo"].region(N, N, 0.0, ALPHA / k).limit  # type: ignore[union-attr]
            drop = (np.arange(N + 1)[None, :] <= limit[:, None]).astype(float)
            floor = np.array([pvalues.floor_pvalue(x, N, p) <= ALPHA / k for x in range(N + 1)], dtype=float)
            either = np.maximum(drop, floor[None, :])
            q_floor = float(_pmf(p) @ either @ _pmf(p))
            q_margin = REGISTRY["chan"].power(N, N, p, p - 0.05, 0.05, ALPHA / m)  # a cell exactly 5 points down
            cells.append(f"m = {m}: --floor {1 - (1 - q_floor) ** m:.3f}, --margin 0.05 {1 - (1 - q_margin) ** m:.3f}")
        lines.append(f"  rate {p:.0%}: " + "; ".join(cells))
    return lines


def power_lines() -> list[str]:
    lines = []
    for n in (N, 100):
        single = REGISTRY["boschloo"].power(n, n, 0.95, 0.80, 0.0, ALPHA / 48)
        paired = REGISTRY["mcnemar"].power(n, n, 0.95, 0.80, 0.0, ALPHA / 48)
        uniform = 1 - (1 - REGISTRY["boschloo"].power(n, n, 0.95, 0.90, 0.0, ALPHA / 48)) ** 48
        lines.append(
            f"  N = {n}: one cell 95% → 80% among 48: Boschloo {single:.3f}, McNemar {paired:.3f}; "
            f"5 points down in every one of 48 cells (any flagged): {uniform:.3f}; "
            f"--stratified (CMH at α/49, simulated): {stratified_power(n, 0.05):.3f} "
            f"(nothing changed: {stratified_power(n, 0.0):.3f})"
        )
    return lines


def stratified_power(n: int, drop: float, cells: int = 48, reps: int = 2000) -> float:
    """P(the overall Cochran–Mantel–Haenszel test rejects at Holm's first step, α/(cells + 1))."""
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(reps):
        xb, xc = rng.binomial(n, 0.95, cells), rng.binomial(n, 0.95 - drop, cells)
        result = cmh([(int(b), n, int(c), n) for b, c in zip(xb, xc, strict=True)], 1 - 2 * ALPHA)
        hits += result is not None and result.p <= ALPHA / (cells + 1)
    return hits / reps


def evidence_lines() -> list[str]:
    """P(an unchanged cell is shown within the margin), exact over every table at N = 25."""
    lines = []
    for margin in (0.05, 0.1):
        test = select(False, margin, "boschloo", N, N)
        shares = [f"{p:.0%}: {1 - test.within_power(N, N, p, p, margin, ALPHA):.2f}" for p in RATES]
        lines.append(
            f"  margin {margin:.0%}, share of unchanged cells with not enough evidence at rate " + ", ".join(shares)
        )
    return lines


def plan_lines() -> list[str]:
    lines = []
    for p in (0.8, 0.9, 0.95):
        planned = plan_runs(p, 0.1, ALPHA / MATRIX_CELLS, paired=False)
        n, exact = planned.runs, f"{planned.power:.3f}" if planned.power is not None else "-"
        lines.append(
            f"  rate {p:.0%} → {p - 0.1:.0%}: plan says {n} runs per side; the gate's exact power there {exact}"
        )
    return lines


def fitted_lines(seed: int) -> list[str]:
    from evalkit.backends.sim_profile import load_profile
    from evalkit.gate.simplan import header_settings, simulate_plan, simulate_rates
    from evalkit.scenario.model import load_scenarios
    from evalkit.stats.exact import binom_pmf

    root = Path(__file__).resolve().parent.parent
    baseline = load_results([root / "results" / "compare-models.jsonl"])
    scenarios = {s.id: s for s in load_scenarios(sorted((root / "scenarios").rglob("*.yaml")))}
    profile = load_profile("fitted/smollm2")
    sim = simulate_rates(baseline, profile, scenarios, header_settings(baseline), experiments=40, seed=seed)
    limit = REGISTRY["boschloo"].region(N, N, 0.0, ALPHA / sim.cells).limit  # type: ignore[union-attr]
    region = (np.arange(N + 1)[None, :] <= limit[:, None]).astype(float)
    pmf = binom_pmf(np.arange(N + 1)[None, :], N, sim.rates[:, :, None])  # experiments x cells x tables
    size = np.einsum("eci,ij,ecj->ec", pmf, region, pmf)  # each cell's false alarm, unchanged
    family = 1 - (1 - size).prod(axis=1)
    plan = simulate_plan(sim, 0.3, {name: N for name in sim.names}, alpha=ALPHA)
    powers = [c.power for c in plan.cells.values() if c.power is not None]
    return [
        f"  fitted/smollm2 (SIMULATED) on {len(sim.names)} SmolLM2 cells (m = {sim.cells}), 40 posterior draws:",
        f"  null: family-wise false alarm at N = {N}: mean {family.mean():.4f}, largest {family.max():.4f}",
        f"  a 30-point drop at N = {N}: {len(powers)} cells can drop so far; per-cell power "
        f"{min(powers):.2f}–{max(powers):.2f}; every drop caught {plan.every_caught:.2f} "
        f"(independent cells would say {plan.every_caught_independent:.2f})"
        if powers and plan.every_caught is not None and plan.every_caught_independent is not None
        else "  no cell can drop by 30 points",
    ]


def timed(label: str, action: Callable[[], list[str]]) -> list[str]:
    started = time.monotonic()
    lines = action()
    return [*lines, f"({label}: {time.monotonic() - started:.0f} s)"]


def asserted(name: str) -> bool:
    """Section 0: the sizes and the plan's powers; prints them, and whether each holds."""
    grid = GRIDS[name]
    print(
        f"0. ASSERTED ({name} grid): N {list(grid.runs)}, rates {grid.rates[0]}–{grid.rates[-1]} "
        f"({len(grid.rates)}), margins {list(grid.margins)}, levels α/m for m in {list(grid.cells)}"
    )
    started = time.monotonic()
    sizes = size_rows(grid)
    worst: dict[str, SizeRow] = {}
    for row in sizes:
        if row.test not in worst or row.size / row.level > worst[row.test].size / worst[row.test].level:
            worst[row.test] = row
    for test, row in worst.items():
        count = sum(r.test == test for r in sizes)
        print(
            f"  size, {test}: worst {row.size:.4g} at level {row.level:.4g} ({row.size / row.level:.3f} × the level; "
            f"N {row.runs}, margin {row.margin:g}, rate {row.at:.3g}) over {count} cases"
            + ("" if row.holds else "  ABOVE ITS LEVEL")
        )
    plans = plan_rows(grid)
    for mode in dict.fromkeys(r.mode for r in plans):
        rows = [r for r in plans if r.mode == mode and r.power is not None]
        low = min(rows, key=lambda r: r.power or 0.0, default=None)
        none = [r for r in plans if r.mode == mode and r.runs is None]
        if low is not None:
            print(
                f"  plan, {mode}: least power at the planned runs {low.power:.3f} ({low.rate:.0%} → "
                f"{low.rate - low.drop:.0%}, m = {low.cells}, {low.runs} runs) over {len(rows)} plans"
                + (f"; {len(none)} with no plan ({none[0].why_not})" if none else "")
            )
    failed = [r for r in sizes if not r.holds] + [r for r in plans if not r.holds]
    for row in failed:
        print(f"  FAILED: {row}")
    print(f"  {'all hold' if not failed else f'{len(failed)} FAIL'} ({time.monotonic() - started:.0f} s)\n")
    return not failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=12, help="config seeds of the end-to-end power check")
    parser.add_argument("--infra-seeds", type=int, default=2, help="config seeds of the infra-error check")
    parser.add_argument("--reps", type=int, default=20_000, help="Bernoulli repetitions of the false-alarm check")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--quick", action="store_true", help="only the asserted checks, on the quick grid")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"Gate calibration (SIMULATED outcomes): α = {ALPHA}, seed {args.seed}\n")
    held = asserted("quick" if args.quick else "full")
    if args.quick:
        return 0 if held else 1
    print(f"Sections 1–10 at N = {N} runs per cell\n")
    print("1. Family-wise false alarm with every cell unchanged (exact; simulated beside)")
    print("\n".join(timed("false alarms", lambda: false_alarms(args.reps, rng))))
    print()
    print("\n".join(timed("end to end", lambda: end_to_end(args.seeds, args.infra_seeds, args.seed))))
    print()
    print("6. One Holm family: family-wise false alarm with --floor (every cell at its floor) and --margin")
    print("   (every cell exactly 0.05 below its baseline, Chan's exact test at α/m), exact at N = 25")
    print("\n".join(timed("one family", family_lines)))
    print("\n7. Power at α/48 (Holm's first step), exact for the test the gate runs")
    print("\n".join(timed("power", power_lines)))
    print("\n8. Not enough evidence (--margin): unchanged cells not shown within the margin, exact at N = 25")
    print("\n".join(timed("evidence", evidence_lines)))
    print(
        f"\n9. evalkit plan --drop 0.1 over {MATRIX_CELLS} cells, unpaired: runs per side, and the gate's power there"
    )
    print("\n".join(timed("plan", plan_lines)))
    print("\n10. A fitted profile as the model (null and alternative), exact given each posterior draw")
    print("\n".join(timed("fitted", lambda: fitted_lines(args.seed))))
    print()
    print(exact_power_line())
    print()
    print(
        f"5. --sequential (batches of {BATCH}, verdict of the fixed-N test at {MAX_RUNS} runs, futility 0.1): "
        "average runs per cell to a verdict, exact; ratio = runs / the fixed-N test's 50"
    )
    print("\n".join(timed("sequential", sequential_lines)))
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
