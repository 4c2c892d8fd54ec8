"""The "BFCL score" table of a report: per BFCL category and report column, the accuracy by evalkit's
checker and by BFCL's own checker on the same final outputs, so a user can set their model's row
beside BFCL's published leaderboard. `evalkit.importers.bfcl.score` computes it (it needs the BFCL
data); this module only holds it, so the report stage's renderers need nothing from the importers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BFCL_MISSING", "BfclEntry", "BfclRow", "BfclScore"]

BFCL_MISSING = "bfcl-eval not installed (pip install 'evalkit[bfcl]')"


@dataclass(frozen=True)
class BfclEntry:
    """One BFCL category in one report column."""

    category: str
    runs: int  # every run of the category's cases in the column, whatever became of it
    evalkit_correct: int
    evalkit_counted: int  # evalkit's denominator: runs that were not infra errors or unsupported
    bfcl_correct: int | None  # None: BFCL's checker was not available
    bfcl_judged: int | None  # BFCL's denominator
    disagree: int | None  # runs both checkers judged with different verdicts
    not_judged: tuple[tuple[str, int], ...]  # (why BFCL's checker could not judge, runs): counted apart

    @property
    def evalkit_rate(self) -> float | None:
        return self.evalkit_correct / self.evalkit_counted if self.evalkit_counted else None

    @property
    def bfcl_rate(self) -> float | None:
        return self.bfcl_correct / self.bfcl_judged if self.bfcl_judged and self.bfcl_correct is not None else None

    @property
    def not_judged_total(self) -> int:
        return sum(n for _, n in self.not_judged)


@dataclass(frozen=True)
class BfclRow:
    """A leaderboard-style row: one report column (backend · model · mode · strategy)."""

    label: str
    simulated: bool
    entries: tuple[BfclEntry | None, ...]  # one per category of the table; None: no run of it


@dataclass(frozen=True)
class BfclScore:
    categories: tuple[str, ...]  # BFCL's own names, in BFCL's order
    rows: tuple[BfclRow, ...]
    bfcl_version: str | None  # the bfcl-eval whose data and checker judged; None when it is missing
    bfcl_missing: str | None = None  # why BFCL's column is empty: BFCL_MISSING
    rules: tuple[tuple[str, str], ...] = ()  # evalkit's named deliberate differences from BFCL's checker: (name, what)

    @property
    def turned(self) -> bool:
        """Categories as rows: more categories than report columns would make a table wider than a screen."""
        return len(self.categories) > len(self.rows)
