"""`evalkit plan BASELINE`: the runs per cell a gate needs, from a baseline's own rates and costs.

Per scenario cell: the runs per side at which the test the gate will run on it catches a drop of D
with 80% probability, at α/m over the m cells (Holm's first step), exactly: the test is the one
`evalkit.stats.gate_tests.select` picks for that many runs (paired or not, with the margin or not),
and its power is summed over every outcome (pairs with independent outcomes: runs that agree more
often than chance only make the paired tests stronger). With a margin, the runs at which an
unchanged cell is shown within it with 80% probability (`runs_to_show_within`: the figure the gate
prints for a cell short of evidence). With `sequential`, the `--max-runs` of `gate --sequential`
against this baseline that catches the drop with 80%, and its expected runs with nothing changed
(exact, `evalkit.stats.stopping_rule.operating_characteristics`). docs/gate.md, "Plan".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from scipy import special

from evalkit.gate.accounting import cell_id
from evalkit.results.runs import Results, RunRow
from evalkit.stats.gate_tests import select
from evalkit.stats.regions import PairStaircase
from evalkit.stats.registry import UNPAIRED
from evalkit.stats.unconditional import Order, ordering_region

__all__ = [
    "POWER",
    "CellPlan",
    "Planned",
    "plan_cells",
    "round_runs",
    "runs_for_drop",
    "runs_to_show_within",
    "sequential_runs",
]

POWER = 0.8
LIMIT = 20_000  # runs per side searched; beyond, "more than" this
_SCAN = 5  # runs below the first that reaches 80% also tried (an exact test's power is a sawtooth in N)
Unpaired = str  # a statistic's name in `evalkit.stats.registry.UNPAIRED`


@dataclass(frozen=True)
class Planned:
    """The least runs found whose exact power reaches POWER, and that power; or why there are none."""

    runs: int | None
    power: float | None
    why_not: str = ""
    test: str = ""  # the test planned for, as the power notes name it
    below: float | None = None  # the power at one run fewer


def _least(
    power_at: Callable[[int], float], guess: int, limit: int, low: int = 2, scan: int = _SCAN
) -> tuple[int, float, float | None] | None:
    """The least n (≥ low) with power_at(n) ≥ POWER: doubling or halving from the guess to a bracket,
    bisection inside it (taking the power as rising with n), then the _SCAN runs below each answer
    tried too, until none of them reaches it."""
    # an exact power costs a region's probability: each n is computed once, however often it is asked
    cache: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in cache:
            cache[n] = power_at(n)
        return cache[n]

    high = min(max(guess, low), limit)
    # the guess falls short: double until the power is reached, or the limit says it never is
    if at(high) < POWER:
        while at(high) < POWER:
            if high >= limit:
                return None
            high = min(limit, max(high * 2, high + 1))
    below = max(low, high // 2)
    # the guess was generous: halve until a size falls short, which brackets the answer
    while below > low and at(below) >= POWER:
        high, below = below, max(low, below // 2)
    if at(below) >= POWER:
        high = below
    while high - below > 1:
        middle = (high + below) // 2
        below, high = (below, middle) if at(middle) >= POWER else (middle, high)
    least = high
    while True:  # below the bisection's answer, the sawtooth may reach 80% again: look _SCAN runs further
        reached = [n for n in range(max(low, least - scan), least) if at(n) >= POWER]
        if not reached:
            break
        least = min(reached)
    return least, at(least), at(least - 1) if least > low else None


def _normal_runs(p_base: float, p_cand: float, margin: float, alpha: float) -> int:
    """A first guess: the normal approximation's runs per side for the drop beyond the margin."""
    # floors: at a rate of 0 or 1 the variance vanishes and the formula would ask for no runs at all
    variance = max(p_base * (1 - p_base) + p_cand * (1 - p_cand), 0.02)
    beyond = max(p_base - p_cand - margin, 1e-3)
    z = -float(special.ndtri(alpha)) + float(special.ndtri(POWER))
    return max(2, math.ceil(z * z * variance / beyond**2))


def _score_power(n: int, p_base: float, p_cand: float, margin: float, alpha: float, paired: bool) -> float:
    """The power of the score test the exact test orders its tables by, at its normal critical value:
    no supremum to take, so cheap, and close to the exact power (a guess for where to look)."""
    order: Order = "tango" if paired else "fm"
    region = ordering_region(order, n, n, margin, -float(special.ndtri(alpha)))
    # pairs with independent outcomes: lost is "baseline passed, candidate failed", gained the reverse
    if isinstance(region, PairStaircase):
        return float(region.probability(p_base * (1 - p_cand), (1 - p_base) * p_cand)[0])
    return float(region.probability(p_base, p_cand)[0])


def _guess(p_base: float, p_cand: float, margin: float, alpha: float, paired: bool) -> int:
    """Runs per side at which the score test reaches POWER: where the exact search starts."""
    found = _least(
        lambda n: _score_power(n, p_base, p_cand, margin, alpha, paired),
        _normal_runs(p_base, p_cand, margin, alpha),
        LIMIT,
        scan=0,
    )
    return int(found[0]) if found is not None else LIMIT


def runs_for_drop(
    p: float, drop: float, alpha: float, *, margin: float = 0.0, paired: bool = True, test: Unpaired = UNPAIRED.default
) -> Planned:
    """Runs per side (pairs) at which the gate's test on a cell at rate p catches a drop to p − drop."""
    # the tolerance lets a drop of 40% from a rate of 0.4 read as possible despite float error
    if drop > p + 1e-12:
        return Planned(None, None, f"no drop of {drop:.0%} is possible from {p:.0%}")
    if drop <= margin:
        return Planned(None, None, f"a drop of {drop:.0%} is not beyond the margin of {margin:.0%}")
    target = max(0.0, p - drop)

    def power(n: int) -> float:
        return select(paired, margin, test, n, n).power(n, n, p, target, margin, alpha)

    found = _least(power, _guess(p, target, margin, alpha, paired), LIMIT)
    if found is None:
        return Planned(None, None, f"80% not reached within {LIMIT:,} runs per side")
    n, achieved, below = found
    return Planned(n, achieved, test=select(paired, margin, test, n, n).name, below=below)


def round_runs(k: int) -> int:
    """The k-th of the runs a gate's figures are given at: two significant digits (10, 11, …, 99,
    100, 110, …), so that cells at many rates share the regions computed at them."""
    if k < 90:
        return 10 + k
    digits, rest = divmod(k - 90, 90)
    return (10 + rest) * int(10 ** (digits + 1))


def _grid_index(n: int) -> int:
    """The least k with round_runs(k) ≥ n (n ≥ 10)."""
    k = 0
    while round_runs(k) < n:
        k += 1
    return k


@lru_cache(maxsize=4096)
def runs_to_show_within(
    p: float, margin: float, alpha: float, *, paired: bool = True, test: Unpaired = UNPAIRED.default
) -> Planned:
    """Runs per side (pairs), on the two-significant-digit grid of `round_runs`, at which an unchanged
    cell at rate p is shown within the margin (its test in the other direction rejects at α, per
    cell, as the gate decides it) with 80% probability, exactly at that number; the grid's previous
    number falls short (`below`)."""

    @cache
    def power(k: int) -> float:
        n = round_runs(k)
        return select(paired, margin, test, n, n).within_power(n, n, p, p, margin, alpha)

    # the within test is the drop test on the swapped sides at −margin: its score guess is the same
    k, top = _grid_index(max(10, _guess(p, p, -margin, alpha, paired))), _grid_index(LIMIT)
    while power(k) < POWER:  # a walk along the grid from the normal approximation's guess
        if k >= top:
            return Planned(None, None, f"more than {LIMIT:,} runs per side")
        k += 1
    # the guess may overshoot: step back while the grid's previous number still reaches 80%
    while k > 0 and power(k - 1) >= POWER:
        k -= 1
    return Planned(round_runs(k), power(k), below=power(k - 1) if k > 0 else None)


def sequential_runs(
    x: int,
    n: int,
    drop: float,
    alpha: float,
    *,
    batch: int = 5,
    futility: float = 0.1,
    test: Unpaired = UNPAIRED.default,
) -> tuple[Planned, float | None]:
    """The `--max-runs` at which `gate --sequential` against this baseline cell (x of n) catches a
    drop to x/n − drop with 80% (exact, given the baseline's counts), and its expected runs with
    nothing changed."""
    from evalkit.stats.stopping_rule import cell_rule, operating_characteristics  # scipy.stats: only here

    p = x / n
    if drop > p + 1e-12:
        return Planned(None, None, f"no drop of {drop:.0%} is possible from {p:.0%}"), None

    def rule(m: int):  # type: ignore[no-untyped-def]
        return cell_rule(x, n, m, alpha, looks=-(-m // batch) - 1, futility=futility, test=test)

    found = _least(lambda m: operating_characteristics(rule(m), max(0.0, p - drop), batch)[0], 50, 400, low=batch)
    if found is None:
        return Planned(None, None, f"80% not reached within 400 runs against a baseline of {n} runs"), None
    m, achieved, below = found
    expected = operating_characteristics(rule(m), p, batch)[1]
    return Planned(m, achieved, test=f"sequential {test.capitalize()}", below=below), expected


@dataclass(frozen=True)
class CellPlan:
    name: str
    base_x: int
    base_n: int
    drop: float
    planned: Planned  # runs per side to catch `drop` with 80%, and the exact power there
    calls_per_run: float
    seconds_per_run: float
    within: Planned | None  # runs per side to show an unchanged cell within the margin
    sequential: Planned | None = None  # --sequential: the max runs that catch the drop with 80%
    sequential_expected: float | None = None  # its expected candidate runs with nothing changed


def _cells(baseline: Results[RunRow]) -> dict[tuple[str, ...], list[RunRow]]:
    cells: dict[tuple[str, ...], list[RunRow]] = defaultdict(list)
    for run in baseline.runs:
        # the rate a gate would compare against counts no infra error
        if run.counted:
            cells[cell_id(run)].append(run)
    return cells


def plan_cells(
    baseline: Results[RunRow],
    drop: float,
    *,
    alpha: float = 0.05,
    margin: float = 0.0,
    pairing: Literal["paired", "unpaired"] = "paired",
    test: Unpaired = UNPAIRED.default,
    sequential: bool = False,
    batch: int = 5,
    futility: float = 0.1,
) -> list[CellPlan]:
    """One plan per scenario cell of the baseline, at α/m over its m cells."""
    cells = _cells(baseline)
    # α/m, Holm's first step over the cells: the level every cell is sure to be tested at
    level = alpha / max(1, len(cells))
    paired = pairing == "paired"
    out = []
    for key, runs in sorted(cells.items()):
        x, n = sum(bool(r.correct) for r in runs), len(runs)
        seq, expected = (
            sequential_runs(x, n, drop, level, batch=batch, futility=futility, test=test)
            if sequential
            else (None, None)
        )
        out.append(
            CellPlan(
                "/".join(key[:3] + key[4:]),
                x,
                n,
                drop,
                runs_for_drop(x / n, drop, level, margin=margin, paired=paired, test=test),
                sum(r.model_calls for r in runs) / n,
                sum(r.wall_s for r in runs) / n,
                runs_to_show_within(x / n, margin, alpha, paired=paired, test=test) if margin > 0 else None,
                seq,
                expected,
            )
        )
    return out
