"""How well a fitted profile predicts the real runs: per cell, and for a guard stack it never saw.

Per cell (mode, guard stack, scenario) with n real runs and k correct, the simulation gives a
predictive distribution of k: the mixture, over posterior draws d, of Binomial(n, p_d), where p_d
is the share of correct runs among the `runs` simulated runs of draw d. (Estimating p_d from a
finite number of runs widens the mixture a little: the interval errs on the wide side.) The real
cell is inside when k lies in the central 95% of that distribution.

Leave-one-stack-out: the profile is fitted again without one stack's calls, and that stack's
cells are simulated; the stack's observed share of correct runs is set against the predicted one.
The prediction's 95% interval is that of the stack's total at the real numbers of runs per cell
(sampled per draw), so it holds both the parameters' uncertainty and the real runs' own noise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from evalkit.backends.sim_profile import SimProfile
from evalkit.scenario.model import Scenario
from evalkit.simfit.classify import Recorded
from evalkit.simfit.fit import fit_profile
from evalkit.simfit.simulate import SimCell, simulate_cells

__all__ = ["CellFit", "CheckResult", "StackPrediction", "check_profile", "leave_one_stack_out"]


@dataclass(frozen=True)
class CellFit:
    source: str  # the results file's name
    mode: str
    stack: str
    scenario: str
    n: int
    correct: int
    predicted: float  # the simulation's mean share of correct runs
    low: float  # the 95% prediction interval of the real share, at n runs
    high: float

    @property
    def inside(self) -> bool:
        return self.low <= self.correct / self.n <= self.high


@dataclass(frozen=True)
class StackPrediction:
    stack: str
    n: int
    observed: float
    predicted: float
    low: float
    high: float

    @property
    def error(self) -> float:
        return self.observed - self.predicted


@dataclass(frozen=True)
class CheckResult:
    cells: list[CellFit]
    stacks: list[StackPrediction]

    @property
    def share_inside(self) -> float:
        return sum(c.inside for c in self.cells) / len(self.cells) if self.cells else float("nan")


def _cells(
    found: Recorded, scenarios: dict[str, Scenario], only: str | None = None
) -> list[tuple[str, SimCell, list[bool]]]:
    chosen = []
    for (source, mode, stack, scenario), verdicts in sorted(found.cells.items()):
        if (only is None or stack == only) and scenario in scenarios:
            cell = SimCell.from_config(mode, stack, scenarios[scenario], found.configs[(source, stack)])
            chosen.append((source, cell, verdicts))
    return chosen


def _interval(n: int, shares: np.ndarray) -> tuple[float, float]:
    """The central 95% of the mixture of Binomial(n, p) over `shares`, as shares of n."""
    ks = np.arange(n + 1)
    pmf = sps.binom.pmf(ks[None, :], n, shares[:, None]).mean(axis=0)
    cdf = np.cumsum(pmf)
    low = int(np.searchsorted(cdf, 0.025 - 1e-12))
    high = int(np.searchsorted(cdf, 0.975 - 1e-12))
    return low / n, min(high, n) / n


def check_profile(
    profile: SimProfile, found: Recorded, scenarios: list[Scenario], *, draws: int = 20, runs: int = 10, seed: int = 0
) -> list[CellFit]:
    """Every real cell of `found` against the simulation of `profile`."""
    pairs = _cells(found, {s.id: s for s in scenarios})
    counts = simulate_cells(profile, [c for _, c, _ in pairs], draws=draws, runs=runs, seed=seed)
    fits = []
    for j, (source, cell, verdicts) in enumerate(pairs):
        shares = counts[:, j] / runs
        low, high = _interval(len(verdicts), shares)
        fits.append(
            CellFit(
                source,
                cell.mode,
                cell.stack,
                cell.scenario.id,
                len(verdicts),
                sum(verdicts),
                float(shares.mean()),
                low,
                high,
            )
        )
    return fits


def _predict_stack(
    stack: str, found: Recorded, scenarios: dict[str, Scenario], *, draws: int, runs: int, seed: int
) -> StackPrediction:
    rest = replace(found, observations=[o for o in found.observations if o.strategy != stack])
    profile = fit_profile(rest)
    pairs = _cells(found, scenarios, only=stack)
    counts = simulate_cells(profile, [c for _, c, _ in pairs], draws=draws, runs=runs, seed=seed)
    sizes = np.array([len(v) for _, _, v in pairs])
    total = int(sizes.sum())
    rng = np.random.default_rng(seed)
    shares = counts / runs  # draws x cells
    # the stack's total at the real sizes: per draw, several binomial samples of every cell
    sampled = rng.binomial(sizes[None, None, :], shares[:, None, :], size=(draws, 50, len(pairs))).sum(axis=2)
    low, high = np.quantile(sampled / total, [0.025, 0.975])
    observed = sum(sum(v) for _, _, v in pairs) / total
    predicted = float((shares * sizes).sum(axis=1).mean() / total)
    return StackPrediction(stack, total, observed, predicted, float(low), float(high))


def leave_one_stack_out(
    found: Recorded, scenarios: list[Scenario], *, draws: int = 20, runs: int = 10, seed: int = 0
) -> list[StackPrediction]:
    """For each guard stack: fitted on the other stacks' calls, its prediction against its real runs."""
    by_id = {s.id: s for s in scenarios}
    stacks = sorted({stack for _, _, stack, _ in found.cells})
    if len(stacks) < 2:
        return []
    return [_predict_stack(s, found, by_id, draws=draws, runs=runs, seed=seed) for s in stacks]


def check(
    profile: SimProfile, found: Recorded, scenarios: list[Scenario], *, draws: int = 20, runs: int = 10, seed: int = 0
) -> CheckResult:
    cells = check_profile(profile, found, scenarios, draws=draws, runs=runs, seed=seed)
    return CheckResult(cells, leave_one_stack_out(found, scenarios, draws=draws, runs=runs, seed=seed))
