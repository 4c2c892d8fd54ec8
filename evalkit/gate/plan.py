"""`evalkit plan BASELINE`: the runs per cell a gate needs, from a baseline's own rates and costs.

Per scenario cell and for the whole matrix: the runs per side at which the gate's unpaired test
(Boschloo, one-sided, at α/m over the m cells: Holm's first step) catches a drop of D with 80%
probability, and what those runs cost in model calls and wall time at the baseline's own averages.
The runs come from Fleiss' normal approximation and are then checked with the exact power of the
test (`evalkit.stats.gate_power`), which is printed beside them (exact tests' power is a sawtooth
in n: the approximation can be a few runs off either way). With a margin, the runs at which an
unchanged cell is shown within it (`evalkit.gate.evidence.runs_needed`, what the gate's "not enough
evidence" list says), and the expected runs of `--sequential` with nothing changed. docs/gate.md.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from evalkit.gate.accounting import cell_id
from evalkit.gate.evidence import runs_needed
from evalkit.results.records import Results, RunRecord
from evalkit.stats.gate_power import gate_power
from evalkit.stats.intervals import approx_n
from evalkit.stats.rates import rate
from evalkit.stats.stopping_rule import cell_rule, operating_characteristics

__all__ = ["CellPlan", "plan_cells", "runs_for_drop"]

_EXACT_CHECK_MAX = 400  # runs per side: above, the exact region takes seconds per cell size


@dataclass(frozen=True)
class CellPlan:
    name: str
    base_x: int
    base_n: int
    drop: float
    runs: int | None  # per side, to catch `drop` with 80% (None: the rate is below the drop)
    power: float | None  # the exact power at `runs` (None: not checked above _EXACT_CHECK_MAX)
    calls_per_run: float
    seconds_per_run: float
    margin_runs: int | None  # per side, to show an unchanged cell within the margin
    sequential_runs: float | None  # expected candidate runs of --sequential at `runs`, nothing changed


def runs_for_drop(
    p: float, drop: float, alpha: float, exact_max: int = _EXACT_CHECK_MAX
) -> tuple[int | None, float | None]:
    """Runs per side from Fleiss' approximation, raised in steps of 2% until the exact power of the
    gate's test reaches 80% (up to `exact_max` runs a side; above, the power is None: not checked)."""
    if p - drop < 0:
        return None, None
    target = max(0.0, min(p, 0.999) - drop)  # at 100% the approximation has no variance to work with
    n = approx_n(min(p, 0.999), target, alpha=alpha)
    power = None
    while n <= exact_max:
        power = gate_power("boschloo", n, n, p, max(0.0, p - drop), alpha)
        if power >= 0.8:
            break
        n += max(1, n // 50)
    return n, power if n <= exact_max else None


def _sequential(x: int, n_base: int, runs: int, alpha: float) -> float | None:
    if runs > 200:
        return None
    rule = cell_rule(x, n_base, runs, alpha, looks=-(-runs // 5) - 1)
    return operating_characteristics(rule, x / n_base, 5)[1]


def plan_cells(baseline: Results, drop: float, *, alpha: float = 0.05, margin: float = 0.0) -> list[CellPlan]:
    cells: dict[tuple[str, ...], list[RunRecord]] = defaultdict(list)
    for run in baseline.runs:
        if run.counted:
            cells[cell_id(run)].append(run)
    level = alpha / max(1, len(cells))
    out = []
    for key, runs in sorted(cells.items()):
        x, n = sum(bool(r.correct) for r in runs), len(runs)
        p = x / n
        needed, power = runs_for_drop(p, drop, level)
        steady = rate(x, n)
        assert steady is not None
        out.append(
            CellPlan(
                "/".join(key[:3] + key[4:]),
                x,
                n,
                drop,
                needed,
                power,
                sum(r.model_calls for r in runs) / n,
                sum(r.wall_s for r in runs) / n,
                runs_needed(steady, steady, margin, 1 - 2 * alpha) if margin > 0 else None,
                _sequential(x, n, needed, level) if needed is not None else None,
            )
        )
    return out
