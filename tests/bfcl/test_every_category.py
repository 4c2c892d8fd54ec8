"""Every BFCL v4 category imports whole: no crash, no scenario evalkit would refuse (each refused case is
listed with its reason), and the summary counts converted, approximated and skipped cases per category."""

from __future__ import annotations

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.importers.bfcl import import_bfcl
from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import CATEGORIES, load_category
from evalkit.scenario.model import Scenario


@pytest.fixture(scope="module")
def whole() -> tuple[list[dict], object]:
    return import_bfcl(["all"], None, 0)


def test_every_category_imports_whole(whole: tuple[list[dict], object]) -> None:
    scenarios, report = whole
    assert set(report.counts) == set(CATEGORIES)  # type: ignore[attr-defined]
    for category, row in report.counts.items():  # type: ignore[attr-defined]
        assert sum(row.values()) == len(load_category(category)), category
        assert row["skipped"] <= len(load_category(category)) * 0.03, (category, row)
    skipped = {case_id for case_id, _ in report.skipped}  # type: ignore[attr-defined]
    assert len(scenarios) + len(skipped) == sum(len(load_category(c)) for c in CATEGORIES)
    assert all(reason for _, reason in report.skipped)  # type: ignore[attr-defined]
    # once crashed ('float' object is not iterable): a dict answer holding dicts
    assert "live_multiple_121-46-0" in {s["provenance"]["id"] for s in scenarios}


def test_categories_once_refused_are_known() -> None:
    assert {
        "simple_java",
        "simple_javascript",
        "multi_turn_base",
        "multi_turn_miss_func",
        "multi_turn_long_context",
    } <= set(CATEGORIES)
    case, answer = load_category("java")[0]  # BFCL's short names work too
    conversion = convert_case("java", case, answer)
    assert conversion.scenario is not None and conversion.scenario["tools"][0]["parameters"]["properties"]
    assert import_bfcl(["java"], 2, 0)[1].counts.keys() == {"simple_java"}


def test_a_case_evalkit_would_refuse_is_skipped_with_its_reason() -> None:
    """live_multiple_552's answer is a boolean for a required string parameter: once written, then refused
    (named rule answer_breaks_its_schema). simple_python_149, once refused for an answer list of lists for
    a list of strings, now imports: BFCL's rule (the answer's type decides, compared exactly) is followed."""
    scenarios, report = import_bfcl(["live_multiple", "simple_python"], None, 0)
    imported = {s["provenance"]["id"] for s in scenarios}
    assert "live_multiple_552-153-1" not in imported and "simple_python_149" in imported
    reasons = dict(report.skipped)
    assert "a boolean where the parameter is a string" in reasons["live_multiple_552-153-1"]
    assert report.counts["live_multiple"]["skipped"] + report.counts["simple_python"]["skipped"] == len(reasons)


def test_a_multi_message_irrelevance_case_is_quoted_in_one_turn() -> None:
    case, answer = next((c, a) for c, a in load_category("live_irrelevance") if c["id"] == "live_irrelevance_125-11-0")
    conversion = convert_case("live_irrelevance", case, answer)
    assert conversion.scenario is not None and conversion.approximations
    scenario = Scenario.model_validate(conversion.scenario)
    assert len(scenario.turns) == 1 and "[assistant]" in scenario.turns[0].user


def test_miss_func_withholds_the_missed_function_until_its_turn() -> None:
    case, answer = next((c, a) for c, a in load_category("multi_turn_miss_func") if c["id"] == "multi_turn_miss_func_0")
    conversion = convert_case("multi_turn_miss_func", case, answer)
    assert conversion.scenario is not None
    scenario = Scenario.model_validate(conversion.scenario)
    assert scenario.turns[3].tools_added == ["sort"]
    assert "sort" not in {t.name for t in scenario.tools_at(2)}
    assert "sort" in {t.name for t in scenario.tools_at(3)}


def test_long_context_loads_bfcls_long_context_state() -> None:
    case, answer = load_category("multi_turn_long_context")[0]
    conversion = convert_case("multi_turn_long_context", case, answer)
    assert conversion.scenario is not None
    assert all(spec.get("options") == {"long_context": True} for spec in conversion.scenario["state"])
