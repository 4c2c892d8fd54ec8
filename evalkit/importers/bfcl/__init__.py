"""`evalkit import bfcl`: BFCL v4 cases as scenarios (see `convert` for how), each one checked as
`evalkit validate` checks it before it is returned."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalkit._model import first_problem
from evalkit.errors import EvalkitError
from evalkit.importers.bfcl.convert import Conversion, convert_case
from evalkit.importers.bfcl.data import ALIASES, CATEGORIES, BfclMissing, attribution, load_category, require_bfcl
from evalkit.importers.bfcl.schema import tool_name, tool_schema
from evalkit.judge.reference_check import reference_problems
from evalkit.scenario.model import Scenario

__all__ = [
    "CATEGORIES",
    "BfclMissing",
    "Conversion",
    "ImportReport",
    "convert_case",
    "import_bfcl",
    "load_category",
    "resolve_categories",
    "tool_name",
    "tool_schema",
]


@dataclass
class ImportReport:
    approximated: list[tuple[str, str]] = field(default_factory=list)  # (case id, note)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (case id, reason)
    # category -> {"converted", "approximated", "skipped"} -> cases
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, category: str, kind: str) -> None:
        row = self.counts.setdefault(category, {"converted": 0, "approximated": 0, "skipped": 0})
        row[kind] += 1


def resolve_categories(names: list[str]) -> list[str]:
    """BFCL category names (`all`, and the short names `python`, `java`, `javascript`, allowed)."""
    if "all" in names:
        return list(CATEGORIES)
    resolved = [ALIASES.get(name, name) for name in names]
    unknown = [c for c in resolved if c not in CATEGORIES]
    if unknown:
        raise EvalkitError(f"unknown BFCL categories {unknown} (known: all, {', '.join(sorted(CATEGORIES))})")
    return list(dict.fromkeys(resolved))


def _refusal(scenario: dict[str, Any]) -> str:
    """Why evalkit would refuse the converted scenario ('' if it accepts it): its model, then its reference
    through its own mocks and check, as `evalkit validate` does."""
    try:
        problems = reference_problems(Scenario.model_validate(scenario))
    except ValidationError as exc:
        problem = first_problem(exc)
        return f"{problem.field}: {problem.message}"[:300]
    except (ValueError, EvalkitError) as exc:
        return " ".join(str(exc).split())[:300]
    return "; ".join(problems)[:300]


def _convert(
    category: str, case: dict[str, Any], answer: dict[str, Any] | None, report: ImportReport, folder: Path | None
) -> Any:
    conversion = convert_case(category, case, answer, folder)
    reason = conversion.skipped if conversion.scenario is None else _refusal(conversion.scenario)
    if reason:
        report.skipped.append((case["id"], reason))
        report.count(category, "skipped")
        return None
    report.approximated += [(case["id"], note) for note in conversion.approximations]
    report.count(category, "approximated" if conversion.approximations else "converted")
    return conversion


def import_bfcl(
    categories: list[str], sample: int | None, seed: int, folder: Path | None = None
) -> tuple[list[dict[str, Any]], ImportReport]:
    """Converted scenarios (with provenance) for a seeded sample of each category, and what happened.
    A scenario evalkit would refuse is never returned: its case is listed as skipped, with the reason.
    `folder`: BFCL's data laid out as bfcl_eval/data is (default: the installed package's)."""
    categories = resolve_categories(categories)
    require_bfcl()
    license_name, credit = attribution()
    report = ImportReport()
    out: list[dict[str, Any]] = []
    for category in categories:
        cases = load_category(category, folder)
        if sample is not None and sample < len(cases):
            picked = sorted(random.Random(f"{seed}:{category}").sample(range(len(cases)), sample))
            cases = [cases[i] for i in picked]
        for case, answer in cases:
            conversion = _convert(category, case, answer, report, folder)
            if conversion is None:
                continue
            conversion.scenario["provenance"] = {
                "dataset": "BFCL v4",
                "category": category,
                "id": case["id"],
                "license": license_name,
                "attribution": credit,
                "approximations": conversion.approximations,
            }
            out.append(conversion.scenario)
    return out, report
