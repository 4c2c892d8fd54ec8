"""Deciding a run: the scenario's check items, `completed`, `correct` and the failure category.

`completed` means the workflow reached its goal structurally (the required tools were called, the
terminal tool was reached, no forbidden call was made, a reply was given); `correct` adds the content
checks (argument values, facts, reply text). This mirrors Forge's Cmp and Scr columns (docs/getting-started.md,
"What a run measures").

The failure category is decided from the failed items' `kind`s, never from their labels. A final
reply that `evalkit.judge.degenerate` flags fails a structural item whatever the check says, and the
run is `degenerate_output`. A run whose "no tool calls" item failed is `unneeded_tool_call` even when
it looped to the iteration limit (so is a forbidden call at the limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.chat import ExecutedCall
from evalkit.judge.items import check_items
from evalkit.judge.turns import state_items, turn_items
from evalkit.results.records import CheckItem, FailureCategory, ItemKind, Outcome
from evalkit.scenario.model import Scenario

__all__ = ["CONTENT_KINDS", "Verdict", "judge_run"]

_ENDED_NORMALLY = ("final_answer", "terminal_tool")
# failed content items of these kinds make a completed run `wrong_arguments`; any other, `wrong_answer`
CONTENT_KINDS: frozenset[ItemKind] = frozenset({"arguments", "call_count", "terminal_facts", "state", "state_results"})


@dataclass(frozen=True)
class Verdict:
    completed: bool
    correct: bool
    items: list[CheckItem]
    failure: FailureCategory | None


def _structural_failure(calls: list[ExecutedCall]) -> FailureCategory:
    # a call whose name was lost in broken output is malformed, not an invented tool
    if any(not c.known_tool and not c.call.name_lost for c in calls):
        return "hallucinated_tool"
    if any(c.call.malformed for c in calls):
        return "malformed_call"
    return "premature_answer" if calls else "text_instead_of_tool"


def failure_category(outcome: Outcome, items: list[CheckItem], calls: list[ExecutedCall]) -> FailureCategory:
    """The category of a run that is not correct, from its outcome, failed item kinds and calls."""
    failed = [i for i in items if not i.passed]
    kinds = {i.kind for i in failed}
    # outcomes that are their own category: what the checks say of such a run is beside the point
    if outcome in ("infra_error", "escalated", "guard_fatal", "runaway", "time_limit"):
        return outcome
    # before the iteration limit: a run that should have called nothing and looped on calls is
    # the unneeded calls, not the loop
    if "no_tool_calls" in kinds:
        return "unneeded_tool_call"
    if outcome == "iteration_limit":
        return "unneeded_tool_call" if "forbidden_call" in kinds else outcome
    # template debris passes substring checks by accident: it is named before any content verdict
    if "not_degenerate" in kinds:
        return "degenerate_output"
    if any(i.structural for i in failed) or outcome not in _ENDED_NORMALLY:
        return _structural_failure(calls)
    return "wrong_arguments" if kinds & CONTENT_KINDS else "wrong_answer"


def judge_run(
    scenario: Scenario,
    outcome: Outcome,
    calls: list[ExecutedCall],
    reply: str | None,
    *,
    turn_replies: list[str | None] | None = None,
) -> Verdict:
    """Decide a finished run from what happened: its outcome, the executed calls, the last reply (and
    each turn's answer, for v2 per-turn checks)."""
    items = check_items(scenario, calls, reply, scenario.check)
    if scenario.check.state_as_reference:
        items += state_items(scenario, calls, len(scenario.turns) - 1)
    items += turn_items(scenario, calls, turn_replies or [])
    structural_ok = all(i.passed for i in items if i.structural)
    # a run stopped by a guard or a limit did not complete, whatever its calls happened to satisfy
    completed = outcome in _ENDED_NORMALLY and structural_ok
    correct = completed and all(i.passed for i in items)
    # an unsupported cell never ran: it has no failure to categorise
    failure = None if correct or outcome == "unsupported" else failure_category(outcome, items, calls)
    return Verdict(completed=completed, correct=correct, items=items, failure=failure)
