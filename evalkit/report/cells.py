"""Per-cell statistics: rates with intervals, retries, failure categories, pass^k and cost, from runs.

`correct` (the check passed) is the headline rate; `completed` (the run ended in the expected way,
whatever it said) is the structural rate shown beside it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from evalkit.results import RunRecord
from evalkit.stats import Interval, IntervalMethod, bootstrap_mean, pass_hat_k, proportion_interval

__all__ = ["PASS_K", "CellStats", "Cost", "Rate", "cell_stats", "cost", "rate"]

PASS_K = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Rate:
    """x of n, with a confidence interval for the proportion."""

    x: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.x / self.n


def rate(x: int, n: int, confidence: float = 0.95, method: IntervalMethod = "wilson") -> Rate | None:
    if n == 0:
        return None
    interval = proportion_interval(x, n, confidence, method)
    return Rate(x, n, interval.low, interval.high)


@dataclass(frozen=True)
class Cost:
    """What a cell's counted runs spent: the other side of a deployer's trade-off."""

    latency_mean_s: float
    latency_median_s: float
    latency_p90_s: float
    model_calls_mean: float
    wasted_calls_mean: float  # model calls beyond the scenario's ideal path
    tokens_mean: float  # prompt + completion tokens per run


def cost(counted: Sequence[RunRecord]) -> Cost | None:
    if not counted:
        return None
    latency = np.array([r.latency_s for r in counted])
    return Cost(
        latency_mean_s=float(np.mean(latency)),
        latency_median_s=float(np.median(latency)),
        latency_p90_s=float(np.quantile(latency, 0.9)),
        model_calls_mean=sum(r.model_calls for r in counted) / len(counted),
        wasted_calls_mean=sum(r.wasted_calls for r in counted) / len(counted),
        tokens_mean=sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in counted) / len(counted),
    )


@dataclass(frozen=True)
class CellStats:
    """Everything the matrix, the plots and the drill-down show for one group of runs.

    Rates count only runs that count (`RunRecord.counted`); infra errors and unsupported runs are
    tallied apart. Rates are None when no run counted.
    """

    runs: int
    counted: int
    infra_errors: int
    unsupported: int
    completed: Rate | None
    correct: Rate | None
    first_try: Rate | None
    guard_fired: Rate | None  # runs in which at least one guard acted (prepare choices excluded)
    retries_mean: float | None
    retries_interval: Interval | None  # percentile bootstrap, seeded
    retries_hist: tuple[int, ...]  # runs with 0, 1, 2, ... retries
    failures: tuple[tuple[str, int], ...]  # category, runs; most frequent first
    pass_k: tuple[float | None, ...]  # pass^k (all k runs correct) for k in PASS_K, averaged over scenarios
    simulated: bool
    cost: Cost | None = None  # None when no run counted

    @property
    def fully_unsupported(self) -> bool:
        return self.runs > 0 and self.unsupported == self.runs


def _count(runs: Sequence[RunRecord], test: Callable[[RunRecord], bool]) -> int:
    return sum(1 for r in runs if test(r))


def _histogram(values: Sequence[int]) -> tuple[int, ...]:
    if not values:
        return ()
    counts = Counter(values)
    return tuple(counts.get(i, 0) for i in range(max(values) + 1))


def _pass_k(counted: Sequence[RunRecord]) -> tuple[float | None, ...]:
    per_scenario: dict[str, list[bool]] = defaultdict(list)
    for run in counted:
        per_scenario[run.cell.scenario].append(run.correct)
    counts = [(sum(v), len(v)) for v in per_scenario.values()]
    return tuple(pass_hat_k(counts, k) for k in PASS_K)


def cell_stats(runs: Sequence[RunRecord], rng: np.random.Generator, *, confidence: float = 0.95,
               method: IntervalMethod = "wilson") -> CellStats:
    counted = [r for r in runs if r.counted]
    n = len(counted)
    retries = [r.retries for r in counted]
    failures = Counter(r.failure for r in counted if r.failure)  # set on every run that is not correct
    return CellStats(
        runs=len(runs),
        counted=n,
        infra_errors=_count(runs, lambda r: r.outcome == "infra_error"),
        unsupported=_count(runs, lambda r: r.outcome == "unsupported"),
        completed=rate(_count(counted, lambda r: r.completed), n, confidence, method),
        correct=rate(_count(counted, lambda r: r.correct), n, confidence, method),
        first_try=rate(_count(counted, lambda r: r.first_try), n, confidence, method),
        guard_fired=rate(_count(counted, lambda r: r.guard_fires > 0), n, confidence, method),
        retries_mean=sum(retries) / n if n else None,
        retries_interval=bootstrap_mean(retries, rng, confidence=confidence) if n else None,
        retries_hist=_histogram(retries),
        failures=tuple(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        pass_k=_pass_k(counted),
        simulated=any(r.simulated for r in runs),
        cost=cost(counted),
    )
