"""What the gate concludes about a cell and about the whole comparison (fixed-N mode)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.stats.gate_power import GateTest
from evalkit.stats.intervals import Difference
from evalkit.stats.rates import Rate
from evalkit.stats.stratified import Stratified

__all__ = ["CellVerdict", "GateResult", "PooledVerdict"]


@dataclass(frozen=True)
class CellVerdict:
    backend: str
    mode: str
    strategy: str
    family: str  # "" when pooled over families (level cell)
    scenario: str  # "" when pooled over scenarios
    models: tuple[str, str]  # baseline, candidate
    metric: str
    baseline: Rate
    candidate: Rate
    difference: Difference  # candidate − baseline, Newcombe interval at `confidence`
    confidence: float
    test: str
    p: float
    p_holm: float
    floor: float | None
    floor_p: float | None  # one-sided exact binomial p of "rate ≥ floor"
    floor_p_holm: float | None
    reasons: tuple[str, ...]  # empty when the cell passes
    worst: tuple[str, ...] = ()  # pooled cells: the scenarios that lost the most runs
    margin: float = 0.0
    within_margin: bool = False  # the interval's lower end is above −margin (margin > 0 only)
    need_runs: int | None = None  # runs per side at which the observed rates would show the margin
    kind: GateTest = "boschloo"  # the test that produced `p` (`test` is its label)

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
    def failed(self) -> bool:
        return bool(self.reasons)


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


@dataclass(frozen=True)
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

    @property
    def failed(self) -> tuple[CellVerdict, ...]:
        return tuple(c for c in self.cells if c.failed)

    @property
    def regressed(self) -> bool:
        """A cell, or a stratified view across cells, regressed."""
        return bool(self.failed) or any(p.failed for p in self.pooled)

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
