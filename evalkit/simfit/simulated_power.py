"""Power by simulation from a (fitted) profile: how often would N runs show that stack B beats A?

Each simulated experiment draws a profile from the fit's posterior (`draw_profile`; a hand-written
profile is used as it is), runs every scenario N times under both stacks with shared seeds (as a
real matrix pairs them), pools each stack's correct runs and applies the one-sided Boschloo test
the gate and the report use. The share of experiments with p < alpha is the power (with parameter
uncertainty, this is sometimes called assurance); its Wilson interval says how many experiments
were enough. Cells are correlated through the shared draw, as real cells are through the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.backends.sim_profile import SimProfile
from evalkit.chat import ToolMode
from evalkit.scenario.model import Scenario
from evalkit.simfit.simulate import SimCell, simulate_cells
from evalkit.stats.proportions import Interval, wilson
from evalkit.stats.pvalues import boschloo

__all__ = ["PowerEstimate", "estimate_power"]


@dataclass(frozen=True)
class PowerEstimate:
    power: float
    interval: Interval  # 95% Wilson, over the simulated experiments
    experiments: int
    runs: int  # per scenario and stack
    rate_a: float  # mean simulated correct rate of stack A
    rate_b: float


def estimate_power(
    profile: SimProfile,
    scenarios: list[Scenario],
    stacks: dict[str, list[Any]],
    *,
    a: str,
    b: str,
    runs: int,
    mode: ToolMode = "native",
    alpha: float = 0.05,
    experiments: int = 200,
    seed: int = 0,
) -> PowerEstimate:
    """The chance that `runs` runs per scenario and stack find stack `b` better than stack `a`
    (one-sided Boschloo at `alpha`), when the model behaves as `profile` says. `stacks` is a
    config's `strategies:` mapping (label -> stack)."""
    config = {"strategies": stacks}
    cells = [SimCell.from_config(mode, label, s, config) for label in (a, b) for s in scenarios]
    counts = simulate_cells(profile, cells, draws=experiments, runs=runs, seed=seed)
    half = len(scenarios)
    n = runs * half
    xa, xb = counts[:, :half].sum(axis=1), counts[:, half:].sum(axis=1)
    hits = sum(boschloo(int(x2), n, int(x1), n, alternative="greater") < alpha for x1, x2 in zip(xa, xb, strict=True))
    return PowerEstimate(
        power=hits / experiments,
        interval=wilson(hits, experiments),
        experiments=experiments,
        runs=runs,
        rate_a=float(xa.mean() / n),
        rate_b=float(xb.mean() / n),
    )
