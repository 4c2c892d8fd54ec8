"""Per-cell statistics: rates with intervals, retries, failure categories, pass^k and cost, from runs.

`correct` (the check passed) is the headline rate; `completed` (the run ended in the expected way,
whatever it said) is the structural rate shown beside it.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evalkit.results.runs import RunRow
from evalkit.stats.averages import bootstrap_mean, pass_hat_k
from evalkit.stats.proportions import Interval, IntervalMethod
from evalkit.stats.rates import Rate, rate

__all__ = ["PASS_K", "CellStats", "Cost", "Tally", "cell_stats"]

PASS_K = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Cost:
    """What a cell's counted runs spent: the other side of a deployer's trade-off.

    A run behind a guard proxy that evalkit served (`RunRecord.served`) costs what the model server
    served it: its calls, tokens and time, counted in front of the model server, since the proxy's own
    retries are hidden from evalkit's client. `calls_seen_mean` is what the client saw then.
    """

    latency_mean_s: float
    latency_median_s: float
    latency_p90_s: float
    model_calls_mean: float
    wasted_calls_mean: float  # model calls beyond the scenario's ideal path
    tokens_mean: float  # prompt + completion tokens per run
    calls_seen_mean: float = 0.0  # model calls per run evalkit's client saw
    served_runs: int = 0  # counted runs whose calls, tokens and latency are the model server's own count


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


@dataclass
class Tally:
    """What a cell's statistics read from its runs, in sums: a family's or the overall row's tally is
    the sum of its scenarios' (`Tally.total`), so a report reads each run once, not once per row."""

    runs: int = 0
    infra_errors: int = 0
    unsupported: int = 0
    completed: int = 0
    correct: int = 0
    first_try: int = 0
    guard_fired: int = 0
    retries: Counter[int] = field(default_factory=Counter)  # retries → counted runs
    failures: Counter[str] = field(default_factory=Counter)  # category → counted runs that were not correct
    per_scenario: dict[str, list[int]] = field(default_factory=dict)  # scenario → [correct, counted]
    latency: array[float] = field(default_factory=lambda: array("d"))  # 8 bytes a run
    model_calls: int = 0  # served where the model server counted them, else seen (`Cost`)
    wasted_calls: int = 0
    tokens: int = 0
    calls_seen: int = 0
    served_runs: int = 0
    simulated: bool = False

    @property
    def counted(self) -> int:
        return len(self.latency)

    @classmethod
    def of(cls, runs: Sequence[RunRow]) -> Tally:
        tally = cls(runs=len(runs), simulated=any(r.simulated for r in runs))
        for r in runs:
            # infra errors and unsupported runs say nothing of the model: counted apart, never in a rate
            if not r.counted:
                tally.infra_errors += r.outcome == "infra_error"
                tally.unsupported += r.outcome == "unsupported"
                continue
            tally.completed += r.completed
            tally.correct += r.correct
            tally.first_try += r.first_try
            # `guard_fires` leaves out the prepare choices: choosing a context is not a rescue
            tally.guard_fired += r.guard_fires > 0
            tally.retries[r.retries] += 1
            if r.failure:
                tally.failures[r.failure] += 1
            # pass^k is averaged over scenarios, so it needs each scenario's own count
            scenario = tally.per_scenario.setdefault(r.cell.scenario, [0, 0])
            scenario[0] += r.correct
            scenario[1] += 1
            tally.add_cost(r)
        return tally

    def add_cost(self, r: RunRow) -> None:
        self.calls_seen += r.model_calls
        served = r.served
        if served is None:
            self.latency.append(r.latency_s)
            self.model_calls += r.model_calls
            self.wasted_calls += r.wasted_calls
            self.tokens += r.usage.prompt_tokens + r.usage.completion_tokens
            return
        # behind a guard proxy the model server's count is the cost: the proxy's own retries are
        # hidden from evalkit's client, which saw fewer calls than were paid for
        self.served_runs += 1
        self.latency.append(served.latency_s)
        self.model_calls += served.calls
        # the proxy's retries make the served count alone exceed the ideal path; never below zero
        self.wasted_calls += max(0, served.calls - r.ideal_iterations)
        self.tokens += served.prompt_tokens + served.completion_tokens

    @classmethod
    def total(cls, parts: Sequence[Tally]) -> Tally:
        out = cls()
        for part in parts:
            for name in _SUMMED:
                setattr(out, name, getattr(out, name) + getattr(part, name))
            out.retries.update(part.retries)
            out.failures.update(part.failures)
            for scenario, (correct, counted) in part.per_scenario.items():
                both = out.per_scenario.setdefault(scenario, [0, 0])
                both[0] += correct
                both[1] += counted
            # the latencies themselves, not a mean: a family's median and p90 need every run's
            out.latency += part.latency
            out.simulated = out.simulated or part.simulated
        return out


_SUMMED = (
    "runs",
    "infra_errors",
    "unsupported",
    "completed",
    "correct",
    "first_try",
    "guard_fired",
    "model_calls",
    "wasted_calls",
    "tokens",
    "calls_seen",
    "served_runs",
)


def _cost(tally: Tally) -> Cost | None:
    n = tally.counted
    if not n:
        return None
    latency = np.array(tally.latency)
    return Cost(
        latency_mean_s=float(np.mean(latency)),
        latency_median_s=float(np.median(latency)),
        latency_p90_s=float(np.quantile(latency, 0.9)),
        model_calls_mean=tally.model_calls / n,
        wasted_calls_mean=tally.wasted_calls / n,
        tokens_mean=tally.tokens / n,
        calls_seen_mean=tally.calls_seen / n,
        served_runs=tally.served_runs,
    )


def cell_stats(
    runs: Sequence[RunRow] | Tally,
    rng: np.random.Generator,
    *,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
) -> CellStats:
    """A cell's statistics, from its runs or from their tally (`Tally.of`, or a `Tally.total`)."""
    tally = runs if isinstance(runs, Tally) else Tally.of(runs)
    n = tally.counted
    # runs with 0, 1, ... retries, up to the largest seen: a retry count no run had still shows as 0
    hist = tuple(tally.retries.get(i, 0) for i in range(max(tally.retries) + 1)) if tally.retries else ()
    return CellStats(
        runs=tally.runs,
        counted=n,
        infra_errors=tally.infra_errors,
        unsupported=tally.unsupported,
        completed=rate(tally.completed, n, confidence, method),
        correct=rate(tally.correct, n, confidence, method),
        first_try=rate(tally.first_try, n, confidence, method),
        guard_fired=rate(tally.guard_fired, n, confidence, method),
        retries_mean=sum(k * v for k, v in tally.retries.items()) / n if n else None,
        retries_interval=bootstrap_mean(tally.retries, rng, confidence=confidence) if n else None,
        retries_hist=hist,
        failures=tuple(sorted(tally.failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        pass_k=tuple(pass_hat_k([(c, k) for c, k in tally.per_scenario.values()], k) for k in PASS_K),
        simulated=tally.simulated,
        cost=_cost(tally),
    )
