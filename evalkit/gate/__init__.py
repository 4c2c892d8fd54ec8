"""The CI regression gate: compare a candidate's results with a baseline's cell by cell (`comparison`),
with its config (`config`), run matching (`match`), rendering (`render`) and the sequential mode
(`sequential`)."""

from __future__ import annotations

from evalkit.gate.comparison import compare
from evalkit.gate.outcome import CellVerdict, GateResult

__all__ = [
    "CellVerdict",
    "GateResult",
    "compare",
]
