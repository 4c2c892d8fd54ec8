"""Every BFCL category: evalkit's verdict equals BFCL's checker's on at least 99% of generated outputs per
category (on all of them in the Java and JavaScript categories). Single-turn categories are judged
whole, every case with every generated output (tests/bfcl/generated_outputs.py: each answer,
alternative and omission, and each mutation at every slot it fits; for Java and JavaScript, whose
values are text, the answer written as the language spells it and each other spelling, and each list
or map argument in other containers, quotings and variants); multi-turn categories on a seeded sample
(the ground truth and one change in one turn). Outputs where a named deliberate difference
(`evalkit.judge.arguments.DELIBERATE_DIFFERENCES`) applies are counted apart; a case `evalkit import
bfcl` does not import is listed with its reason (tests/bfcl/test_every_category.py bounds them). The
per-category table is printed (`pytest -s`); `benchmarks/bfcl_agreement.py` prints it with the time
each category takes."""

from __future__ import annotations

import random
from itertools import chain, permutations
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.importers.bfcl import _refusal as refusal
from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import CATEGORIES, load_category
from evalkit.importers.bfcl.languages import LANGUAGES, item_kind, language_key, spelled
from evalkit.importers.bfcl.reference import bfcl_verdict
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.scenario.model import Scenario
from tests.bfcl.generated_outputs import collection_outputs, first_values, outputs
from tests.bfcl.multi_turn_runs import bfcl_multi_turn_verdict, evalkit_multi_turn_verdict, runs
from tests.bfcl.test_agreement import evalkit_verdict

MULTI_SAMPLE, SEED = 4, 22
Row = dict[str, Any]
Case = tuple[dict[str, Any], dict[str, Any] | None, Scenario]


def _cases(category: str, size: int | None) -> tuple[list[Case], list[str]]:
    """The category's cases (all, or a seeded sample of `size`) evalkit imports, and those it does not."""
    cases = load_category(category)
    if size is not None:
        cases = [cases[i] for i in sorted(random.Random(f"{SEED}:{category}").sample(range(len(cases)), size))]
    out, skipped = [], []
    for case, answer in cases:
        conversion = convert_case(category, case, answer)
        reason = conversion.skipped or (refusal(conversion.scenario) if conversion.scenario else "")
        if conversion.scenario is None or reason:
            skipped.append(f"{case['id']}: {reason}")
        else:
            out.append((case, answer, Scenario.model_validate(conversion.scenario)))
    return out, skipped


def spelled_answer(category: str, case: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """A Java or JavaScript case's possible answer as a model would write it: every value as text."""
    language = language_key(category)
    declared = {f["name"]: f["parameters"].get("properties", {}) for f in case["function"]}
    truth = [
        {
            name: {
                p: [a if a == "" else _spelled(a, language, declared[name].get(p, {})) for a in alts]
                for p, alts in params.items()
            }
        }
        for entry in answer["ground_truth"]
        for name, params in entry.items()
    ]
    return {"id": answer["id"], "ground_truth": truth}


def _spelled(value: Any, language: str, schema: dict[str, Any]) -> Any:
    """A value as text; a map answer (each key's acceptable values) as the map of each key's first value."""
    value = first_values(value) if isinstance(value, dict) else value
    return spelled(value, language, schema.get("type", ""), item_kind(schema))


def _named_rule(category: str, label: str, output: Any, case: dict[str, Any], answer: Any, ours: bool) -> str | None:
    """The deliberate difference that applies to this output, if any."""
    if category.startswith("multi_turn") and label.endswith("guessed call"):
        return "no_call_where_bfcl_expects_none"
    offered = {f["name"].replace(".", "_") for f in case.get("function", [])}
    if category == "live_relevance" and output and any(set(c) - offered for c in output):
        return "relevance_needs_an_offered_tool"
    if ours and "parallel" in category and answer and len(output) <= 6:
        # BFCL matches its answers to the calls greedily, in answer order: another order of the same calls passes
        truth = answer["ground_truth"]
        if any(bfcl_verdict(category, case["function"], list(p), truth) for p in permutations(output)):
            return "one_to_one_is_a_maximum_matching"
    return None


def _single_turn(category: str, case: dict[str, Any], answer: Any, scenario: Scenario) -> Any:
    truth = answer["ground_truth"] if answer else None
    generated = answer if answer is None or category not in LANGUAGES else spelled_answer(category, case, answer)
    judged = outputs(case, generated, language=category in LANGUAGES)
    if category in LANGUAGES and answer:
        base = next(outputs(case, generated))[1]  # the answer, every value in the language's spelling
        judged = chain(judged, collection_outputs(case, answer, base, language_key(category)))
    for label, out in judged:
        yield label, out, bfcl_verdict(category, case["function"], out, truth), evalkit_verdict(scenario, out)


def _multi_turn(case: dict[str, Any], answer: Any, scenario: Scenario) -> Any:
    truth = answer["ground_truth"] if answer else []
    for label, run in runs(truth):
        yield label, run, bfcl_multi_turn_verdict(case, run, truth), evalkit_multi_turn_verdict(scenario, run)


def agreement_row(category: str, size: int | None = None) -> Row:
    """One category's row; `size`: a seeded sample of that many cases (None: every case)."""
    cases, skipped = _cases(category, size)
    row: Row = {"category": category, "cases": len(cases), "outputs": 0, "same": 0, "named": 0}
    row |= {"differ": [], "not imported": skipped}
    for case, answer, scenario in cases:
        multi = category.startswith("multi_turn")
        judged = _multi_turn(case, answer, scenario) if multi else _single_turn(category, case, answer, scenario)
        for label, output, theirs, ours in judged:
            row["outputs"] += 1
            if theirs == ours:
                row["same"] += 1
            elif _named_rule(category, label, output, case, answer, ours):
                row["named"] += 1
            else:
                row["differ"].append(f"{case['id']} {label}: evalkit {ours}, BFCL {theirs}: {str(output)[:160]}")
    return row


def table(rows: list[Row]) -> str:
    lines = [f"{'category':<26}{'cases':>7}{'not imp.':>9}{'outputs':>9}{'same':>8}{'named':>7}{'agree':>9}"]
    for r in rows:
        share = 100 * r["same"] / max(r["outputs"] - r["named"], 1)
        lines.append(
            f"{r['category']:<26}{r['cases']:>7}{len(r['not imported']):>9}{r['outputs']:>9}{r['same']:>8}"
            f"{r['named']:>7}{share:>8.2f}%"
        )
    return "\n".join(lines)


SINGLE_TURN = [c for c in CATEGORIES if not c.startswith("multi_turn")]


@pytest.mark.parametrize("category", list(CATEGORIES))
def test_agreement_per_category(category: str) -> None:
    multi = category.startswith("multi_turn")
    row = agreement_row(category, MULTI_SAMPLE if multi else None)
    print("\n" + table([row]))
    counted = row["outputs"] - row["named"]
    assert row["outputs"] >= 8 and counted > 0
    # Java and JavaScript, read by a port of BFCL's own converters: every verdict the same
    assert row["same"] >= (1.0 if category in LANGUAGES else 0.99) * counted, "\n".join(row["differ"][:30])
    if not multi:  # judged whole: every case is judged or listed as not imported
        assert row["cases"] + len(row["not imported"]) == len(load_category(category))


@pytest.mark.parametrize("category", list(LANGUAGES))
def test_every_list_or_map_argument_is_judged_right_and_wrong(category: str) -> None:
    """Each imported case with a Java/JavaScript list or map answer gets collection outputs (other
    spellings and variants of the answer), some of which BFCL passes and some it fails; every case's
    answer, as the language spells it, passes both checkers."""
    cases, _ = _cases(category, None)
    verdicts: dict[str, set[bool]] = {}
    for case, answer, scenario in cases:
        for label, _, theirs, ours in _single_turn(category, case, answer, scenario):
            if label == "answer":
                assert theirs and ours, case["id"]
            if label.startswith("collection"):
                verdicts.setdefault(case["id"], set()).add(theirs)
    assert len(verdicts) >= 15 and all(v == {True, False} for v in verdicts.values()), verdicts


def test_named_rules_used_here_are_named() -> None:
    used = {"no_call_where_bfcl_expects_none", "relevance_needs_an_offered_tool", "one_to_one_is_a_maximum_matching"}
    assert used <= set(DELIBERATE_DIFFERENCES)
