"""`evalkit plan BASELINE --profile PROFILE`: the gate's power and the runs it needs, by simulation.

The analytic plan (`evalkit.gate.plan`) takes each cell's observed rate as the truth and treats the
cells one by one. Here a (fitted) profile stands in for the model instead. Every experiment draws
one profile from the fit's posterior (`evalkit.simfit.simulate.draw_profile`) and runs every baseline
cell `sim_runs` times on the simulated backend under that draw; the share of correct runs is the
cell's rate p in that experiment. The same draw serves every cell, so the cells' rates move together
as the model's parameters make them (a lower `tool_step.correct` lowers every tool-calling cell).

The drop: the candidate is the same model with each correct run turned into a failure with
probability D / p̄, where p̄ is the cell's mean simulated rate: its rate is p (1 - D / p̄), on
average D lower, in every experiment. (A cell whose p̄ is below D cannot drop by D.) The gate's test
is the analytic plan's (`evalkit.stats.gate_tests.select`: paired or not, with the margin or not),
one-sided, at α/m over all m baseline cells (Holm's first step), n runs a side. Given an
experiment's rates the test's power is exact (its region's probability), so the
simulated power at n is its mean over the experiments: it holds the rates' uncertainty (the
posterior's, and the noise of `sim_runs` runs per draw, which errs on the wide side) but no
sampling noise of the test itself. Across cells, the chance that the gate catches every cell's drop
is the mean over experiments of the product of the cells' powers (the cells' runs are independent
given the draw); set beside the product of the mean powers, it shows what the correlation changes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.backends.sim_profile import SimProfile
from evalkit.errors import ConfigError
from evalkit.gate.accounting import cell_id
from evalkit.results.runs import Results, RunRow
from evalkit.run.config import recorded_stacks
from evalkit.scenario.model import Scenario
from evalkit.simfit.simulate import SimCell, simulate_cells
from evalkit.stats.gate_tests import select
from evalkit.stats.regions import PairStaircase
from evalkit.stats.registry import UNPAIRED

__all__ = ["SimCellPlan", "SimPlan", "SimRates", "header_settings", "simulate_plan", "simulate_rates"]

_TARGET = 0.8
_MAX_RUNS = 400  # runs per side: the analytic plan's exact check stops there too


@dataclass(frozen=True)
class SimCellPlan:
    name: str  # as `CellPlan.name`
    rate: float  # the mean simulated rate p̄ (SIMULATED)
    power: float | None  # at the planned runs (None: no planned runs, or the cell cannot drop by D)
    runs: int | None  # per side for 80% (None: cannot drop by D, or not within _MAX_RUNS)


@dataclass(frozen=True)
class SimPlan:
    cells: dict[str, SimCellPlan]
    experiments: int
    every_caught: float | None  # P(every simulated cell's drop is caught) at the planned runs
    every_caught_independent: float | None  # the same if the cells were independent
    left_out: list[str]  # baseline cells not simulated, with why


@dataclass(frozen=True)
class _Design:
    level: float  # α/m
    margin: float
    paired: bool
    test: str  # a statistic's name in `evalkit.stats.registry.UNPAIRED`


def _power(rates: np.ndarray, drop: float, mean: float, n: int, design: _Design) -> np.ndarray:
    """Per experiment, the exact power of the gate's test at α/m with n runs a side (pairs with
    independent outcomes), baseline rate p and candidate rate p (1 - drop/mean)."""
    # the drop scales with each experiment's rate, so the mean over experiments drops by `drop`
    cand = rates * (1 - drop / mean)
    test = select(design.paired, design.margin, design.test, n, n)
    region = test.region(n, n, design.margin, design.level)
    if isinstance(region, PairStaircase):
        return region.probability(rates * (1 - cand), (1 - rates) * cand)
    return region.probability(rates, cand)


def _runs_needed(rates: np.ndarray, drop: float, mean: float, design: _Design, start: int) -> int | None:
    """The fewest runs a side whose mean simulated power reaches 80%: doubling from `start`, then
    halving the bracket (exact power is a sawtooth in n, so this is "about", as the analytic plan says)."""
    low, high = 1, max(2, start)
    while _power(rates, drop, mean, high, design).mean() < _TARGET:
        if high >= _MAX_RUNS:
            return None
        low, high = high, min(_MAX_RUNS, high * 2)
    while high - low > max(1, low // 50):  # to 2%, the analytic plan's step
        mid = (low + high) // 2
        if _power(rates, drop, mean, mid, design).mean() >= _TARGET:
            high = mid
        else:
            low = mid
    return high


def _sim_cells(
    baseline: Results[RunRow], profile: SimProfile, scenarios: dict[str, Scenario], config: dict[str, Any]
) -> tuple[list[tuple[str, SimCell]], list[str], int]:
    """The baseline's cells to simulate (named as the analytic plan names them), those left out, and m."""
    cells: dict[tuple[str, ...], list[RunRow]] = defaultdict(list)
    for run in baseline.runs:
        if run.counted:
            cells[cell_id(run)].append(run)
    chosen, left_out = [], []
    # a hand-written profile names no model: it stands in for every cell of the baseline
    model = profile.fitted.model if profile.fitted is not None else None
    models = {runs[0].cell.model for runs in cells.values()}
    others: dict[str, int] = defaultdict(int)
    for key, runs in sorted(cells.items()):
        name, cell = "/".join(key[:3] + key[4:]), runs[0].cell
        # a fitted profile stands in for its own model only, when the baseline has that model's cells
        if model is not None and model in models and cell.model != model:
            others[cell.model] += 1
        elif cell.scenario not in scenarios:
            left_out.append(f"{name}: scenario {cell.scenario} not found")
        elif cell.strategy not in config.get("strategies", {}):
            raise ConfigError(f"guard stack {cell.strategy!r} of the baseline is not in the config's strategies")
        else:
            chosen.append((name, SimCell.from_config(cell.mode, cell.strategy, scenarios[cell.scenario], config)))
    left_out += [f"{k} cells of {other}: another model than the profile's" for other, k in sorted(others.items())]
    return chosen, left_out, len(cells)


def header_settings(baseline: Results[RunRow]) -> dict[str, Any]:
    """The stacks (`strategies:`) and `sampling:` the baseline ran with, from its headers' configs."""
    headers = [h.config for h in baseline.headers]
    for header in headers:  # a stack a results file cannot hold is an error naming it, before anything is simulated
        recorded_stacks(header, ", ".join(baseline.paths))
    # a resumed file has several headers: a stack added by a later one is still a stack the runs used
    stacks = {k: v for h in headers for k, v in (h.get("strategies") or {}).items()}
    return {"strategies": stacks, "sampling": headers[0].get("sampling") if headers else None}


@dataclass(frozen=True)
class SimRates:
    """The simulated rates of the baseline's cells, per experiment: simulated once, planned for any drop."""

    names: list[str]
    rates: np.ndarray  # experiments x cells
    cells: int  # m: every baseline cell, simulated or not (the gate's Holm family)
    left_out: list[str]


def simulate_rates(
    baseline: Results[RunRow],
    profile: SimProfile,
    scenarios: dict[str, Scenario],
    config: dict[str, Any],
    *,
    experiments: int = 40,
    sim_runs: int = 20,
    seed: int = 0,
) -> SimRates:
    """Every baseline cell of the profile's model, simulated `sim_runs` times under each of `experiments`
    posterior draws. `config` holds the stacks (`strategies:`) and `sampling:` the baseline ran with."""
    if experiments < 1 or sim_runs < 1:
        raise ConfigError("--experiments and --sim-runs must be at least 1")
    chosen, left_out, m = _sim_cells(baseline, profile, scenarios, config)
    if not chosen:
        return SimRates([], np.zeros((experiments, 0)), m, left_out)
    counts = simulate_cells(profile, [c for _, c in chosen], draws=experiments, runs=sim_runs, seed=seed)
    return SimRates([name for name, _ in chosen], counts / sim_runs, m, left_out)


def simulate_plan(
    simulated: SimRates,
    drop: float,
    planned: dict[str, int | None],
    *,
    alpha: float = 0.05,
    margin: float = 0.0,
    paired: bool = True,
    test: str = UNPAIRED.default,
) -> SimPlan:
    """Power at the `planned` runs per cell (by name) and the runs for 80%, from the simulated rates."""
    design = _Design(alpha / max(1, simulated.cells), margin, paired, test)
    rates = simulated.rates
    out: dict[str, SimCellPlan] = {}
    at_planned: list[np.ndarray] = []
    for j, name in enumerate(simulated.names):
        mean = float(rates[:, j].mean())
        # a cell that cannot drop by D on average has no power to plan for
        if mean <= 0 or mean < drop:
            out[name] = SimCellPlan(name, mean, None, None)
            continue
        n = planned.get(name)
        power = _power(rates[:, j], drop, mean, n, design) if n is not None else None
        if power is not None:
            at_planned.append(power)
        needed = _runs_needed(rates[:, j], drop, mean, design, n or 10)
        out[name] = SimCellPlan(name, mean, float(power.mean()) if power is not None else None, needed)
    every = independent = None
    if at_planned:
        powers = np.array(at_planned)  # cells x experiments
        # within one experiment the cells share a posterior draw: their powers move together, which
        # the product over cells per experiment keeps and the product of means would not
        every = float(powers.prod(axis=0).mean())
        independent = float(powers.mean(axis=1).prod())
    return SimPlan(out, rates.shape[0], every, independent, simulated.left_out)
