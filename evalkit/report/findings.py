"""The findings summary at the top of a report: per model and family, which guard stack to ship.

For every model (backend · model) and family, the candidates are the model's stacks (mode ·
strategy) with counted runs. The best is the one with the highest `correct` rate (ties: more runs,
then fewer model calls, then lower median latency). Every other stack is tested against it with a
one-sided test that the best is better (exact McNemar when the runs pair by scenario, index and
seed, Boschloo's exact test otherwise), Holm-adjusted within the finding: the stacks whose
adjusted p stays above α are "not significantly worse" — with this N, the data cannot tell them
from the best. Where even the most lopsided outcome at these run counts (the best's correct runs
against none) could not pass that test, "not significantly worse" would read as "fine" while it
only means "never testable": such a stack is "too few runs to tell", listed apart.

A best stack is only named when it is better than nothing: significantly better (one-sided
Boschloo, α) than a stack with no correct run at its own N. The lower bound of its interval cannot
decide that: Wilson's is above 0 whenever one run is correct (1 of 19: [1–25%]). Otherwise the
finding says that no stack works here. Every stack carries its guards (`guards`: "grammar" may be
respond_tool + grammar), as the config set them. Each finding carries one sentence, written from
these numbers only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from evalkit.report.cells import CellStats, Cost
from evalkit.report.comparisons import DiscordantPairs
from evalkit.results.runs import RunRow
from evalkit.stats.pvalues import boschloo, holm, mcnemar
from evalkit.stats.rates import Rate

__all__ = ["Candidate", "Finding", "find"]


@dataclass(frozen=True)
class Candidate:
    column_id: str
    stack: str  # "mode · strategy"
    correct: Rate
    completed: Rate | None
    retries_mean: float
    cost: Cost
    simulated: bool
    p_holm: float | None  # against the best (None for the best itself)
    guards: str = ""  # what the stack runs, as the config set it ("respond_tool + grammar")

    @property
    def name(self) -> str:
        """The stack's label with its guards, where they say more than the label."""
        if not self.guards or self.stack.endswith(f" · {self.guards}"):
            return self.stack
        return f"{self.stack} ({self.guards})"


@dataclass(frozen=True)
class Finding:
    model: str
    family: str
    best: Candidate
    not_worse: tuple[Candidate, ...]  # not significantly worse than the best, and testable at these runs
    worse: tuple[Candidate, ...]  # significantly worse
    alpha: float
    too_few: tuple[Candidate, ...] = ()  # too few runs to tell: no outcome at these run counts could show worse
    p_vs_none: float = 1.0  # one-sided p that the best beats a stack with none correct at its N (1: untested)

    @property
    def works(self) -> bool:
        """The best stack is significantly better than nothing: only then is it called best."""
        return self.best.correct.x > 0 and self.p_vs_none <= self.alpha

    @property
    def simulated(self) -> bool:
        return self.best.simulated

    @property
    def sentence(self) -> str:
        return finding_sentence(self)


def _pct(rate: Rate) -> str:
    return f"{rate.value:.0%} [{rate.low * 100:.0f}–{rate.high * 100:.0f}%] ({rate.x}/{rate.n})"


def _cost(c: Candidate) -> str:
    return (
        f"{c.retries_mean:.1f} retries, {c.cost.model_calls_mean:.1f} model calls and "
        f"{c.cost.latency_median_s:.1f} s median latency per run"
    )


def _names(candidates: Sequence[Candidate]) -> str:
    return "; ".join(
        f"{c.name} {c.correct.value:.0%} ({c.correct.x}/{c.correct.n}, {c.retries_mean:.1f} retries)"
        for c in candidates
    )


def finding_sentence(f: Finding) -> str:
    best = f.best
    others = len(f.not_worse) + len(f.too_few) + len(f.worse)
    model = f"{f.model} [SIM]" if f.simulated else f.model
    if best.correct.x == 0 and not others:
        return (
            f"{model}, {f.family}: the only stack measured, {best.name}, produced no correct run (0/{best.correct.n})."
        )
    if best.correct.x == 0:
        return (
            f"{model}, {f.family}: no stack produced a correct run "
            f"(0/{best.correct.n} for each of {others + 1}); nothing to ship."
        )
    # a best that is no better than nothing is not named best: "best" would read as "use this"
    if not f.works:
        return (
            f"{model}, {f.family}: no stack works here: the most correct, {best.name}, is correct "
            f"{_pct(best.correct)}, not significantly better than none correct (one-sided Boschloo against "
            f"0/{best.correct.n}, p = {f.p_vs_none:.2f}, α = {f.alpha}); nothing to ship."
        )
    text = f"{model}, {f.family}: best is {best.name}, correct {_pct(best.correct)}, at {_cost(best)}."
    if f.not_worse:
        text += f" Not significantly worse (one-sided, Holm, α = {f.alpha}): {_names(f.not_worse)}."
    if f.too_few:
        text += (
            " Too few runs to tell (even none correct would not be significantly worse at these runs): "
            f"{_names(f.too_few)}."
        )
    if f.not_worse or f.too_few:
        if f.worse:  # named too: a reader should not have to find them by elimination
            text += f" Significantly worse: {_names(f.worse)}."
    elif others:
        text += f" {'The other stack is' if others == 1 else f'All {others} other stacks are'} significantly worse."
    else:
        text += " It is the only stack measured."
    return text


def _p_better(best: Sequence[RunRow], other: Sequence[RunRow], rb: Rate, ro: Rate, pairs: DiscordantPairs) -> float:
    # one-sided: the question is whether the best is better, not whether the two differ
    discordant = pairs.count(best, other)
    if discordant is not None:
        return mcnemar(*discordant, alternative="greater")
    return boschloo(rb.x, rb.n, ro.x, ro.n, alternative="greater")


def _smallest_p(
    best: Sequence[RunRow], other: Sequence[RunRow], rb: Rate, ro: Rate, pairs: DiscordantPairs, tests: int
) -> float:
    """The Holm-adjusted p of the most lopsided outcome these run counts allow (the best's correct
    runs against none of the other's), ranked first in Holm's order: above α, no outcome could tell."""
    # paired: every correct run of the best lost by the other, none gained
    if pairs.count(best, other) is not None:
        extreme = mcnemar(rb.x, 0, alternative="greater")
    else:
        extreme = boschloo(rb.x, rb.n, 0, ro.n, alternative="greater")
    # ranked first, Holm multiplies it by the number of tests: no rank gives it a smaller adjusted p
    return min(1.0, tests * extreme)


def _rank(c: Candidate, order: int) -> tuple[float, int, float, float, int]:
    # ties on the rate go to more evidence, then to the cheaper stack; display order last, so it is stable
    return (-c.correct.value, -c.correct.n, c.cost.model_calls_mean, c.cost.latency_median_s, order)


def _finding(
    model: str,
    family: str,
    candidates: list[tuple[Candidate, Sequence[RunRow]]],
    alpha: float,
    pairs: DiscordantPairs,
) -> Finding:
    ranked = sorted(enumerate(candidates), key=lambda item: _rank(item[1][0], item[0]))
    (best, best_runs), rest = ranked[0][1], [c for _, c in ranked[1:]]
    p_raw = [_p_better(best_runs, runs, best.correct, c.correct, pairs) for c, runs in rest]

    def too_few(c: Candidate, runs: Sequence[RunRow], p: float) -> bool:
        # only a stack not shown worse can be "too few": one shown worse had enough runs to show it
        return p > alpha and _smallest_p(best_runs, runs, best.correct, c.correct, pairs, len(rest)) > alpha

    tested = [(replace(c, p_holm=p), too_few(c, runs, p)) for (c, runs), p in zip(rest, holm(p_raw), strict=True)]
    return Finding(
        model=model,
        family=family,
        best=best,
        not_worse=tuple(c for c, few in tested if c.p_holm is not None and c.p_holm > alpha and not few),
        worse=tuple(c for c, _ in tested if c.p_holm is not None and c.p_holm <= alpha),
        alpha=alpha,
        too_few=tuple(c for c, few in tested if few),
        # against a stack of the same size with none correct: is the best better than nothing at all?
        p_vs_none=boschloo(best.correct.x, best.correct.n, 0, best.correct.n, alternative="greater"),
    )


def find(
    families: Sequence[tuple[str, str]],
    columns: Sequence[tuple[str, str, str]],
    runs: dict[tuple[str, str], Sequence[RunRow]],
    cells: dict[tuple[str, str], CellStats],
    alpha: float = 0.05,
    guards: dict[str, str] | None = None,
) -> tuple[Finding, ...]:
    """`families`: (row id, family); `columns`: (column id, model label, stack), in display order;
    `runs` and `cells` keyed by (row id, column id); `guards`: column id -> what its stack runs. One
    finding per model and family with counted runs."""
    # models in column order, once each: findings follow the matrix left to right
    models = list(dict.fromkeys(model for _, model, _ in columns))
    guards = guards or {}
    pairs = DiscordantPairs()
    out = []
    for model in models:
        for row_id, family in families:
            candidates = []
            for column_id, column_model, stack in columns:
                stats = cells.get((row_id, column_id))
                # a stack with no counted run in this family has no rate to rank
                if column_model != model or stats is None or stats.correct is None or stats.cost is None:
                    continue
                candidate = Candidate(
                    column_id,
                    stack,
                    stats.correct,
                    stats.completed,
                    stats.retries_mean or 0.0,
                    stats.cost,
                    stats.simulated,
                    None,
                    guards.get(column_id, ""),
                )
                candidates.append((candidate, runs[(row_id, column_id)]))
            if candidates:
                out.append(_finding(model, family, candidates, alpha, pairs))
    return tuple(out)
