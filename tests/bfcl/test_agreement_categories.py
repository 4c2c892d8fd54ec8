"""Every BFCL category, single- and multi-turn: evalkit's verdict equals BFCL's checker's on at least 99% of
generated outputs per category (each possible answer, each alternative, each with one mutation; the ground
truth of multi-turn cases and one change in one turn). Outputs where a named deliberate difference
(`evalkit.judge.arguments.DELIBERATE_DIFFERENCES`) applies are counted apart. The per-category table is
printed (`pytest -s`); `benchmarks/bfcl_agreement.py` prints it for whole categories."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.importers.bfcl import _refusal as refusal
from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import CATEGORIES, load_category
from evalkit.importers.bfcl.reference import bfcl_verdict
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.scenario.model import Scenario
from tests.bfcl.generated_outputs import outputs
from tests.bfcl.multi_turn_runs import bfcl_multi_turn_verdict, evalkit_multi_turn_verdict, runs
from tests.bfcl.test_agreement import evalkit_verdict

SINGLE_SAMPLE, MULTI_SAMPLE, SEED = 40, 4, 22
Row = dict[str, Any]


def _cases(category: str, size: int) -> list[tuple[dict[str, Any], dict[str, Any] | None, Scenario]]:
    cases = load_category(category)
    picked = sorted(random.Random(f"{SEED}:{category}").sample(range(len(cases)), min(size, len(cases))))
    out = []
    for case, answer in (cases[i] for i in picked):
        conversion = convert_case(category, case, answer)
        if conversion.scenario is not None and not refusal(conversion.scenario):  # skipped cases are listed
            out.append((case, answer, Scenario.model_validate(conversion.scenario)))
    return out


def _named_rule(category: str, label: str, output: Any, case: dict[str, Any]) -> str | None:
    """The deliberate difference that applies to this output, if any."""
    if category.startswith("multi_turn") and label.endswith("guessed call"):
        return "no_call_where_bfcl_expects_none"
    offered = {f["name"].replace(".", "_") for f in case.get("function", [])}
    if category == "live_relevance" and output and any(set(c) - offered for c in output):
        return "relevance_needs_an_offered_tool"
    return None


def agreement_row(category: str, size: int) -> Row:
    row: Row = {"category": category, "outputs": 0, "same": 0, "named": 0, "differ": []}
    for case, answer, scenario in _cases(category, size):
        truth = answer["ground_truth"] if answer else None
        if category.startswith("multi_turn"):
            generated = list(runs(truth or []))
            verdicts = [
                (label, run, bfcl_multi_turn_verdict(case, run, truth or []), evalkit_multi_turn_verdict(scenario, run))
                for label, run in generated
            ]
        else:
            verdicts = [
                (label, out, bfcl_verdict(category, case["function"], out, truth), evalkit_verdict(scenario, out))
                for label, out in outputs(case, answer)
            ]
        for label, output, theirs, ours in verdicts:
            row["outputs"] += 1
            if theirs == ours:
                row["same"] += 1
            elif _named_rule(category, label, output, case):
                row["named"] += 1
            else:
                row["differ"].append(f"{case['id']} {label}: evalkit {ours}, BFCL {theirs}")
    return row


def table(rows: list[Row]) -> str:
    lines = [f"{'category':<26}{'outputs':>8}{'same':>7}{'named':>7}{'agree':>8}"]
    for r in rows:
        share = 100 * r["same"] / max(r["outputs"] - r["named"], 1)
        lines.append(f"{r['category']:<26}{r['outputs']:>8}{r['same']:>7}{r['named']:>7}{share:>7.1f}%")
    return "\n".join(lines)


ROWS: list[Row] = []


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_agreement_per_category(category: str) -> None:
    row = agreement_row(category, MULTI_SAMPLE if category.startswith("multi_turn") else SINGLE_SAMPLE)
    ROWS.append(row)
    print("\n" + table([row]))
    counted = row["outputs"] - row["named"]
    assert row["outputs"] >= 8 and counted > 0
    assert row["same"] >= 0.99 * counted, "\n".join(row["differ"][:20])


def test_named_rules_used_here_are_named() -> None:
    assert {"no_call_where_bfcl_expects_none", "relevance_needs_an_offered_tool"} <= set(DELIBERATE_DIFFERENCES)
