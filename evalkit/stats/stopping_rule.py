"""The stopping rule of `evalkit gate --sequential`: a curtailed fixed-N test against the baseline.

The decision the gate wants is the fixed-N one: after `max_runs` candidate runs, the one-sided
exact unpaired test of the baseline cell's x_b/n_b against the candidate's x/N (Boschloo's, or
Fisher's) at the per-cell level α/m (Bonferroni over the m cells). For a given baseline that test
rejects exactly when the candidate's passes x ≤ k*, i.e. when it has at least N − k* failures, so
the rule is a single number per cell, and the baseline's own uncertainty is inside the test (both
arms are binomial), not a plug-in p0.

The candidate runs in batches, and a cell stops as soon as its verdict is known:
- regression: N − k* failures reached; the fixed-N test would reject whatever the remaining runs do
  (deterministic curtailment);
- regression (interim): a Haybittle–Peto interim boundary (Haybittle 1971, Br. J. Radiol. 44:793;
  Peto et al. 1976, Br. J. Cancer 34:585): at each of the L looks before N, the same exact test on
  the runs so far rejects at INTERIM_SHARE·α/L; the final test then runs at (1 − INTERIM_SHARE)·α,
  so by the union bound the cell's false alarm stays ≤ α whatever the looks see;
- accept: more than k* passes; it could no longer reject;
- accept (futility): stochastic curtailment (Lan, Simon & Halperin 1982, "Stochastically curtailed
  tests in long-term clinical trials", Commun. Statist. C 1:207–219; Jennison & Turnbull 2000,
  "Group Sequential Methods", ch. 10): the conditional probability that the cell would still reject
  at N is under `futility`, computed at the design alternative p₁: the candidate rate that the
  fixed-N test against this baseline fails with probability 1 − β = 0.8. (A fixed alternative such
  as "15 points below the baseline" would stop every cell at once when α/m is small, since at
  α/170 the test cannot see 15 points; then it would miss a 45-point drop too.)
A curtailed regression is declared only when the final test would reject on every continuation, so
the per-cell false alarm is at most INTERIM_SHARE·α/m + (1 − INTERIM_SHARE)·α/m = α/m, and the
family-wise one ≤ α at any number of cells (Bonferroni), for any stopping times. A futility stop
can only lose power: since the conditional power is a martingale under the alternative, at most
`futility` of it (Lan et al.). `operating_characteristics` computes a cell's error rates and
expected runs exactly; `benchmarks/gate_calibration.py` prints them beside a simulation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from scipy import stats as sps

from evalkit.stats.exact import unpaired_pvalues
from evalkit.stats.registry import UNPAIRED

__all__ = ["DESIGN_POWER", "INTERIM_SHARE", "CellRule", "Decision", "cell_rule", "decide", "operating_characteristics"]

Decision = Literal["regression", "regression (interim)", "accept", "accept (futility)", "continue"]
INTERIM_SHARE = 0.1  # of each cell's α, spent on the interim looks


@dataclass(frozen=True)
class CellRule:
    base_x: int
    base_n: int
    max_runs: int
    alpha: float  # per cell, all looks together
    interim_alpha: float  # per interim look
    final_alpha: float  # the test at max_runs
    k: int  # the fixed-N test at max_runs rejects when the candidate passes ≤ k (−1: it never can)
    p1: float  # the design alternative the futility stop looks at
    futility: float
    test: str  # the unpaired statistic, by its name in `evalkit.stats.registry.UNPAIRED`

    @property
    def failures_to_fail(self) -> int:
        """Failures within max_runs that make the cell a regression (max_runs + 1: impossible)."""
        return self.max_runs - self.k


DESIGN_POWER = 0.8


def cell_rule(
    base_x: int,
    base_n: int,
    max_runs: int,
    alpha: float,
    *,
    looks: int,
    futility: float = 0.1,
    test: str = UNPAIRED.default,
) -> CellRule:
    """`looks`: the interim looks before max_runs (0: none, the final test gets all of α)."""
    # no interim looks: nothing is spent early, and the final test gets the whole of α
    final_alpha = alpha * (1 - INTERIM_SHARE) if looks else alpha
    row = unpaired_pvalues(base_n, max_runs, test)[base_x]
    k = -1
    while k + 1 <= max_runs and row[k + 1] <= final_alpha:  # p rises with the candidate's passes
        k += 1
    # the interim share split evenly over the looks: the union bound keeps their total at INTERIM_SHARE·α
    interim = alpha * INTERIM_SHARE / looks if looks else 0.0
    failures = max_runs - k
    # P(Binom(N, q) ≥ F) = I_q(F, N − F + 1): the failure rate q at which F failures come with 80%
    p1 = 1 - float(sps.beta.ppf(DESIGN_POWER, failures, max_runs - failures + 1)) if failures <= max_runs else 0.0
    return CellRule(base_x, base_n, max_runs, alpha, interim, final_alpha, k, p1, futility, test)


def decide(rule: CellRule, passes: int, failures: int, *, interim: bool = True) -> Decision:
    """The cell's verdict after `passes + failures` counted candidate runs (at most max_runs).
    `interim`: this call is one of the rule's interim looks (call it at most `looks` times so)."""
    needed = rule.failures_to_fail - failures
    # enough failures already: the final test rejects whatever the remaining runs do
    if needed <= 0:
        return "regression"
    # more passes than the final test tolerates: it can no longer reject
    if passes > rule.k:
        return "accept"
    runs = passes + failures
    if (
        interim
        and runs
        and rule.interim_alpha
        and unpaired_pvalues(rule.base_n, runs, rule.test)[rule.base_x, passes] <= rule.interim_alpha
    ):
        return "regression (interim)"
    remaining = rule.max_runs - passes - failures  # ≥ needed, since passes ≤ k
    # the chance that the remaining runs bring the failures still needed, were the rate the design's p₁
    if float(sps.binom.sf(needed - 1, remaining, 1 - rule.p1)) < rule.futility:
        return "accept (futility)"
    return "continue"


def operating_characteristics(rule: CellRule, p: float, batch: int) -> tuple[float, float]:
    """(P(the cell is called a regression), expected counted runs) for a candidate whose true rate
    is p, looking after every batch of `batch` runs as `evalkit gate --sequential` does. Exact: the
    distribution of (passes, failures) is carried from look to look."""
    # the probability of each (passes, failures) among the cells still running after a look
    states: dict[tuple[int, int], float] = {(0, 0): 1.0}
    rejected, runs, done = 0.0, 0.0, 0
    while states:
        size = min(batch, rule.max_runs - done)
        done += size
        pmf = sps.binom.pmf(range(size + 1), size, p)
        grown: dict[tuple[int, int], float] = defaultdict(float)
        for (s, f), weight in states.items():
            for k, q in enumerate(pmf):
                grown[(s + k, f + size - k)] += weight * q
        states = {}
        for (s, f), weight in grown.items():
            # the last batch is the final test, not an interim look
            decision = decide(rule, s, f, interim=done < rule.max_runs)
            if decision == "continue":
                states[(s, f)] = weight
                continue
            rejected += weight * decision.startswith("regression")
            runs += weight * (s + f)
    return rejected, runs
