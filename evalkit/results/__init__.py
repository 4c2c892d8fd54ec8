"""The results file: its records (`records`), the append-only writer (`writer`), the fast reader of run
summaries (`scan`), integrity checks, shards and merge, the output lock, portable paths and
secret redaction. Everything downstream (statistics, report, gate) reads results through here.

The names below load on first use (PEP 562): every command imports `evalkit.results.escaping` to
escape what it prints, and should not pay for the pydantic models of the records on the way
(`evalkit list` spent a third of its time there; issue 31).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "RunReader": "evalkit.results.reader",
    "load_results": "evalkit.results.reader",
    "parse_record": "evalkit.results.reader",
    **{
        name: "evalkit.results.records"
        for name in (
            "FAILURE_CATEGORIES",
            "Cell",
            "CheckItem",
            "Footer",
            "Header",
            "Intervention",
            "ModelCall",
            "RunHead",
            "RunRecord",
        )
    },
    **{name: "evalkit.results.runs" for name in ("Results", "RunRow", "Segment")},
}

if TYPE_CHECKING:
    from evalkit.results.reader import RunReader, load_results, parse_record
    from evalkit.results.records import (
        FAILURE_CATEGORIES,
        Cell,
        CheckItem,
        Footer,
        Header,
        Intervention,
        ModelCall,
        RunHead,
        RunRecord,
    )
    from evalkit.results.runs import Results, RunRow, Segment


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit.results' has no attribute {name!r}")


__all__ = [
    "FAILURE_CATEGORIES",
    "Cell",
    "CheckItem",
    "Footer",
    "Header",
    "Intervention",
    "ModelCall",
    "Results",
    "RunHead",
    "RunReader",
    "RunRecord",
    "RunRow",
    "Segment",
    "load_results",
    "parse_record",
]
