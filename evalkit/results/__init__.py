"""The results file: its records (`records`), the append-only writer (`writer`), the fast reader of run
summaries (`scan`), integrity checks, shards and merge, the output lock, portable paths and
secret redaction. Everything downstream (statistics, report, gate) reads results through here."""

from __future__ import annotations

from evalkit.results.reader import RunReader, load_results, parse_record
from evalkit.results.records import (
    FAILURE_CATEGORIES,
    Cell,
    CheckItem,
    Footer,
    Header,
    Intervention,
    ModelCall,
    Results,
    RunRecord,
    Segment,
)

__all__ = [
    "FAILURE_CATEGORIES",
    "Cell",
    "CheckItem",
    "Footer",
    "Header",
    "Intervention",
    "ModelCall",
    "Results",
    "RunReader",
    "RunRecord",
    "Segment",
    "load_results",
    "parse_record",
]
