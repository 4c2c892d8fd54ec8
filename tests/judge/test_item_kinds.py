"""The failure category is decided from each check item's `kind`, never from its label."""

from __future__ import annotations

import random
from pathlib import Path

from evalkit.chat import ExecutedCall, ToolCall
from evalkit.judge.verdict import failure_category, judge_run
from evalkit.results.reader import load_results
from evalkit.results.records import CheckItem
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario, load_scenarios
from tests.extras import shipped_scenarios, skip_left_out

ROOT = Path(__file__).resolve().parents[2]
OUTCOMES = ("final_answer", "terminal_tool", "iteration_limit", "failed")


def _executed(scenario: Scenario, calls: list[ToolCall]) -> list[ExecutedCall]:
    return [execute_call(scenario, c) for c in calls]


def _behaviours(scenario: Scenario) -> list[tuple[list[ToolCall], str | None]]:
    """What a model can do: the reference, nothing, half of it, garbled arguments, an invented tool,
    a reply of template debris."""
    reference = [ToolCall(name=c.name, arguments=dict(c.arguments)) for c in scenario.reference.calls]
    garbled = [ToolCall(name=c.name, arguments={"x": 1}) for c in reference]
    invented = [ToolCall(name="no_such_tool", arguments={})]
    reply = scenario.reference.reply or "Done."
    return [
        (reference, reply),
        ([], "Hello! How can I help?"),
        (reference[: len(reference) // 2], reply),
        (garbled, reply),
        (invented, reply),
        (reference, "<|im_start|>assistant<|im_end|>" * 6),
    ]


def _reworded(items: list[CheckItem], rng: random.Random) -> list[CheckItem]:
    words = ["turn 1: ", "no tool calls", "never called x", "arguments of", "state", "terminal", "a.b"]
    return [i.model_copy(update={"item": rng.choice(words) + str(rng.random())}) for i in items]


def test_rewording_every_label_changes_no_category() -> None:
    rng = random.Random(7)
    scenarios = load_scenarios(sorted((ROOT / "scenarios").glob("*/*.yaml")))
    judged = 0
    seen: set[str] = set()
    for scenario in scenarios:
        for calls, reply in _behaviours(scenario):
            executed = _executed(scenario, calls)
            for outcome in OUTCOMES:
                verdict = judge_run(scenario, outcome, executed, reply)
                assert all(i.kind is not None for i in verdict.items), scenario.id
                if verdict.failure is None:
                    continue
                judged += 1
                seen.add(verdict.failure)
                assert failure_category(outcome, _reworded(verdict.items, rng), executed) == verdict.failure
    assert judged > 300
    # every category a check item decides is exercised, so a kind that lost its meaning shows
    assert seen >= {
        "text_instead_of_tool",
        "premature_answer",
        "hallucinated_tool",
        "wrong_arguments",
        "wrong_answer",
        "unneeded_tool_call",
        "degenerate_output",
        "iteration_limit",
    }, seen


def test_per_turn_items_carry_their_turn() -> None:
    every, left_out = shipped_scenarios()
    scenarios = [s for s in every if any(t.check is not None for t in s.turns)]
    if not scenarios:  # the shipped multi-turn scenarios are BFCL's, whose mocks are bfcl_eval classes
        skip_left_out(left_out)
    assert scenarios
    scenario = scenarios[0]
    verdict = judge_run(scenario, "final_answer", [], "ok", turn_replies=["ok"] * len(scenario.turns))
    per_turn = [i for i in verdict.items if i.turn is not None]
    assert per_turn and all(i.item.startswith(f"turn {i.turn + 1}: ") for i in per_turn)


def test_records_written_before_kinds_still_load() -> None:
    # compare-models' runs were judged before items had kinds (adr013's were re-judged since)
    results = load_results([ROOT / "results" / "compare-models.jsonl"])
    items = [i for r in results.runs for i in r.check]
    assert items and all(i.kind is None for i in items)
