"""The CI regression gate: compare a candidate's results with a baseline's cell by cell (`verdict`),
with its config (`config`), run matching (`match`), rendering (`render`) and the sequential mode
(`sequential`)."""

from __future__ import annotations

from evalkit.gate.verdict import (
    CellVerdict,
    GateResult,
    compare,
)

__all__ = [
    "CellVerdict",
    "GateResult",
    "compare",
]
