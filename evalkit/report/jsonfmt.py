"""The JSON report: the report data as one JSON document, for other tools to read.

Transcripts are left out (the results file has them all); everything else that the HTML report
shows is here, with `simulated` flags at the top, on every column and on every cell.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from evalkit.report.data import ReportData

__all__ = ["SCHEMA", "render_json", "report_dict"]

SCHEMA = "evalkit-report/1"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    # JSON has no NaN or infinity: a value without a number is null, which every reader accepts
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def report_dict(data: ReportData) -> dict[str, Any]:
    rows = {row.id: row for row in data.rows}
    columns = {column.id: column for column in data.columns}
    cells = [
        {"row": _plain(rows[r]), "column": c, **_plain(stats)}
        for r, by_column in data.cells.items()
        for c, stats in by_column.items()
    ]
    drilldowns = [
        {
            "row": d.row.id,
            "column": d.column.id,
            "prepare_choices": _plain(d.prepare_choices),
            "failed_total": d.failed_total,
        }
        for d in data.drilldowns
    ]
    return {
        "schema": SCHEMA,
        "title": data.title,
        "generated_at": data.generated_at,
        "simulated": data.simulated,
        "confidence": data.confidence,
        "interval_method": data.interval_method,
        "alpha": data.alpha,
        "bootstrap_seed": data.bootstrap_seed,
        "total_runs": data.total_runs,
        "counted_runs": data.counted_runs,
        "infra_errors": data.infra_errors,
        "unsupported": data.unsupported,
        "incomplete": list(data.incomplete),
        "provenance": _plain(data.provenance),
        "columns": [_plain(c) | {"id": c.id, "label": c.label} for c in columns.values()],
        "rows": [_plain(r) | {"label": r.label} for r in data.rows],
        "cells": cells,
        "comparisons": _plain(data.comparisons),
        "power": _plain(data.power) | {"summary": data.power.summary} if data.power else None,
        "not_counted": [_plain(n) | {"column": n.column.id} for n in data.not_counted],
        "drilldowns": drilldowns,
        **({"published": _plain(data.published)} if data.published is not None else {}),
        **({"bfcl_score": _plain(data.bfcl_score)} if data.bfcl_score is not None else {}),
        **({"side_by_side": _plain(data.side_by_side)} if data.side_by_side else {}),
    }


def render_json(data: ReportData) -> str:
    # allow_nan=False: a non-finite number that slipped past `_plain` is an error, not invalid JSON
    return json.dumps(report_dict(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
