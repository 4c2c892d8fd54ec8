"""Running real cells again on the simulated backend, with profiles drawn from a fit's posterior.

A fitted profile stores, for every parameter, the calls behind it and how many showed the behaviour
(`Estimate.count`), so `draw_profile` can draw a whole profile from the posterior (Dirichlet for
the tool-step weights, Beta for every share, the Jeffreys prior of `evalkit.simfit.fit`). Every
draw is used for every cell, so the cells' predictions are correlated as the parameters make them.
Runs of draw d use the seeds `run_seed(base, "sim", scenario, d * m + i)`: different stacks meet the
same draws, as paired real runs do.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.backends.base import RetryPolicy
from evalkit.backends.entry import BackendEntry
from evalkit.backends.sim import SimulatedBackend
from evalkit.backends.sim_profile import Estimate, SimProfile
from evalkit.chat import Sampling, ToolMode
from evalkit.judge.verdict import judge_run
from evalkit.run.config import parse_strategy_specs
from evalkit.run.loop import run_loop
from evalkit.run.matrix import run_seed
from evalkit.scenario.model import Scenario
from evalkit.strategies import StrategySpec, build_stack

__all__ = ["SimCell", "draw_profile", "simulate_cells"]

_ONCE = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0)
_HALF = 0.5
_PARTS = ("tool_step", "reply_step", "after_nudge", "constrained")


@dataclass(frozen=True)
class SimCell:
    """One cell to simulate: a scenario under a guard stack in a mode, with the real run's settings."""

    mode: ToolMode
    stack: str
    scenario: Scenario
    specs: list[StrategySpec]
    sampling: Sampling

    @classmethod
    def from_config(cls, mode: str, stack: str, scenario: Scenario, config: dict[str, Any]) -> SimCell:
        specs = parse_strategy_specs(stack, config["strategies"][stack])
        sampling = Sampling.model_validate(config.get("sampling") or {})
        return cls(mode=mode, stack=stack, scenario=scenario, specs=specs, sampling=sampling)  # type: ignore[arg-type]


def _draw_part(found: dict[str, Estimate], rng: np.random.Generator) -> dict[str, float]:
    names = list(found)
    # the tool-step behaviours are one Dirichlet: drawn together, so their weights still sum to 1
    if names and all(n.startswith("tool_step.") for n in names):
        weights = rng.dirichlet([found[n].count + _HALF for n in names])
        return {n.split(".", 1)[1]: float(w) for n, w in zip(names, weights, strict=True)}
    return {n.split(".", 1)[1]: float(rng.beta(e.count + _HALF, e.calls - e.count + _HALF)) for n, e in found.items()}


def _draw_parts(estimates: dict[str, Estimate], prefix: str, rng: np.random.Generator) -> dict[str, dict[str, float]]:
    drawn: dict[str, dict[str, float]] = {}
    for part in _PARTS:
        found = {k.removeprefix(prefix): e for k, e in estimates.items() if k.startswith(f"{prefix}{part}.")}
        if found:
            drawn[part] = _draw_part(found, rng)
    return drawn


def draw_profile(profile: SimProfile, rng: np.random.Generator) -> SimProfile:
    """One profile from the fit's posterior (the profile itself when it was not fitted)."""
    if profile.fitted is None:
        return profile
    estimates = profile.fitted.estimates
    data = profile.model_dump()
    for part, values in _draw_parts(estimates, "", rng).items():  # a parameter not estimated keeps its value
        data[part] = {**(data[part] or {}), **values}
    for override in data["overrides"]:
        # an override's estimates are named by its group (`family=x.` or `mode=y.`) in the fit
        key = "family" if override["family"] is not None else "mode"
        prefix = f"{key}={override[key]}."
        for part, values in _draw_parts(estimates, prefix, rng).items():
            override[part] = {**(override[part] or data[part]), **values}
    return SimProfile.model_validate(data)


async def _run_cell(backend: SimulatedBackend, cell: SimCell, seeds: list[int]) -> int:
    correct = 0
    for i, seed in enumerate(seeds):
        state, view = await run_loop(
            cell.scenario,
            build_stack(cell.specs),
            backend,
            mode=cell.mode,
            sampling=cell.sampling.model_copy(update={"seed": seed}),
            run_id=f"sim/{cell.stack}/{cell.scenario.id}/{i}",
            seed=seed,
            policy=_ONCE,
        )
        verdict = judge_run(cell.scenario, state.outcome, view.executed, state.reply, turn_replies=state.turn_replies)
        correct += verdict.correct
    return correct


def simulate_cells(profile: SimProfile, cells: list[SimCell], *, draws: int, runs: int, seed: int = 0) -> np.ndarray:
    """Correct runs out of `runs`, per posterior draw (rows) and cell (columns)."""
    rng = np.random.default_rng(seed)
    entry = BackendEntry(label="sim", kind="sim", model=profile.name)
    out = np.zeros((draws, len(cells)), dtype=int)

    async def go() -> None:
        for d in range(draws):
            # one draw for every cell of an experiment: the cells share what the model is, as real ones do
            backend = SimulatedBackend(entry=entry, profile=draw_profile(profile, rng))
            for c, cell in enumerate(cells):
                # run indices go on across draws, so no two draws replay the same seeds
                seeds = [run_seed(seed, "sim", cell.scenario.id, d * runs + i) for i in range(runs)]
                out[d, c] = await _run_cell(backend, cell, seeds)

    asyncio.run(go())
    return out
