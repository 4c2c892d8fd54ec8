"""What the gate concludes about a cell and about the whole comparison (fixed-N mode), and how a
verdict says it (`pts`: a change in whole points, the one formatter every gate text uses)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from evalkit.stats.gate_tests import Counts, GateKind
from evalkit.stats.proportions import Difference
from evalkit.stats.rates import Rate
from evalkit.stats.stratified import Stratified

__all__ = ["CellMeasurement", "CellVerdict", "GateResult", "PooledVerdict", "pts", "pts_abs"]


def pts(value: float) -> str:
    """A change in whole points with its sign ("+3", "-12", "0")."""
    # a change that rounds to no points reads "0", not "+0" or "-0"
    points = round(value * 100)
    return f"{points:+d}" if points else "0"


def pts_abs(value: float) -> str:
    """A margin or a size in points, without a sign ("5", "2.5")."""
    return f"{round(value * 100, 2):g}"


@dataclass(frozen=True, kw_only=True)
class CellMeasurement:
    """What the gate measured in one cell: everything of its verdict but the Holm-adjusted p-values,
    which need every cell's p (`CellVerdict` adds them)."""

    backend: str
    mode: str
    strategy: str
    family: str  # "" when pooled over families (level cell)
    scenario: str  # "" when pooled over scenarios
    models: tuple[str, str]  # baseline, candidate
    metric: str
    baseline: Rate
    candidate: Rate
    counts: Counts  # what the test read (paired: the discordant pairs)
    kind: GateKind  # the test that produced `p` (`evalkit.stats.gate_tests.REGISTRY`)
    test: str  # its label
    p: float
    alpha: float
    difference: Difference  # candidate − baseline, the test's own interval at `confidence`
    confidence: float
    margin: float = 0.0
    within_margin: bool = False  # shown within the margin: the test in the other direction rejects
    need_runs: int | None = None  # runs per side at which an unchanged cell at this rate is shown within
    floor: float | None = None
    floor_p: float | None = None  # one-sided exact binomial p of "rate ≥ floor"
    worst: tuple[str, ...] = ()  # pooled cells: the scenarios that lost the most runs

    def judged(self, p_holm: float, floor_p_holm: float | None) -> CellVerdict:
        """The verdict: this measurement with its Holm-adjusted p-values."""
        # every field of a measurement is one of a verdict's (a subclass), so the copy is complete
        measured = {f.name: getattr(self, f.name) for f in fields(CellMeasurement)}
        return CellVerdict(**measured, p_holm=p_holm, floor_p_holm=floor_p_holm)


@dataclass(frozen=True, kw_only=True)
class CellVerdict(CellMeasurement):
    """A cell's measurement and its Holm-adjusted p-values: whether it failed, and why."""

    p_holm: float
    floor_p_holm: float | None = None

    @property
    def name(self) -> str:
        return "/".join(p for p in (self.backend, self.mode, self.strategy, self.scenario or self.family) if p)

    @property
    def where(self) -> str:
        """Every coordinate a reader needs to find the cell: family, scenario, model, strategy."""
        scenario = self.scenario or "all scenarios pooled"
        model = self.models[1] if self.models[0] == self.models[1] else f"{self.models[0]} → {self.models[1]}"
        return (
            f"family {self.family or 'all'}, scenario {scenario}, model {model}, strategy {self.strategy}, "
            f"backend {self.backend}, mode {self.mode}"
        )

    @property
    def dropped(self) -> bool:
        """The drop test rejected after Holm's adjustment."""
        return self.p_holm <= self.alpha and self.difference.estimate < 0

    @property
    def under_floor(self) -> bool:
        return self.floor_p_holm is not None and self.floor_p_holm <= self.alpha

    @property
    def reasons(self) -> tuple[str, ...]:
        """Why the cell fails (empty when it passes)."""
        out = []
        if self.dropped:
            d = self.difference
            beyond = f" by more than the margin of {pts_abs(self.margin)} pts" if self.margin > 0 else ""
            out.append(
                f"{self.metric} rate dropped{beyond} {self.baseline.value:.0%} → {self.candidate.value:.0%} "
                f"({pts(d.estimate)} pts, {self.confidence:.0%} CI [{pts(d.low)}, {pts(d.high)}]); "
                f"one-sided {self.test} p = {self.p:.4f}, Holm-adjusted {self.p_holm:.4f} ≤ α = {self.alpha}"
                + (f"; largest drops: {', '.join(self.worst)}" if self.worst else "")
            )
        if self.under_floor and self.floor is not None:
            out.append(
                f"{self.metric} rate {self.candidate.x}/{self.candidate.n} is under the floor {self.floor:.0%}: "
                f"one-sided exact binomial p = {self.floor_p:.4f}, Holm-adjusted {self.floor_p_holm:.4f} "
                f"≤ α = {self.alpha}"
            )
        return tuple(out)

    @property
    def failed(self) -> bool:
        return self.dropped or self.under_floor


@dataclass(frozen=True)
class PooledVerdict:
    """A stratified test across cells (all of them, or one scenario family's), in the cells' family."""

    name: str
    cells: int
    result: Stratified
    p_holm: float
    alpha: float

    @property
    def failed(self) -> bool:
        return self.p_holm <= self.alpha and self.result.difference < 0


@dataclass(frozen=True, kw_only=True)
class GateResult:
    cells: tuple[CellVerdict, ...]
    skipped: tuple[tuple[str, str], ...]  # (cell, why): unsupported on both sides, nothing to judge
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    alpha: float
    level: str
    metric: str
    simulated: bool
    unjudged: tuple[tuple[str, str], ...] = ()  # (cell, why it could not be judged)
    allow_unjudged: bool = False
    margin: float = 0.0
    require_evidence: bool = False
    pooled: tuple[PooledVerdict, ...] = ()
    configs_differ: bool = False  # the two files ran different configs: unpaired cells are summed up

    @property
    def failed(self) -> tuple[CellVerdict, ...]:
        return tuple(c for c in self.cells if c.failed)

    @property
    def failed_pooled(self) -> tuple[PooledVerdict, ...]:
        return tuple(p for p in self.pooled if p.failed)

    @property
    def regressed(self) -> bool:
        """A cell, or a stratified view across cells, regressed."""
        return bool(self.failed) or bool(self.failed_pooled)

    @property
    def short_of_evidence(self) -> tuple[CellVerdict, ...]:
        """Passed cells not shown within the margin (with a margin set)."""
        return tuple(c for c in self.cells if self.margin > 0 and not c.failed and not c.within_margin)

    @property
    def passed(self) -> bool:
        """No cell regressed, every cell was judged (or `allow_unjudged`), and with
        `require_evidence` every passed cell was shown within the margin."""
        judged = self.allow_unjudged or not self.unjudged
        return not self.regressed and judged and not (self.require_evidence and self.short_of_evidence)

    @property
    def exit_code(self) -> int:
        """1: a cell regressed; 4: a cell was not judged (or, with `require_evidence`, not shown
        within the margin); 0: neither."""
        return 1 if self.regressed else 0 if self.passed else 4
