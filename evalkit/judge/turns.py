"""Per-turn checks (v2 `turns: [{user, check, reference}]`) and state checks against stateful mocks.

A turn's check sees only the calls made during that turn and that turn's answer, so a model that acts
on a missing datum before the user supplies it fails the turn where it acted, even when the run as a
whole ends in the right place. `state_as_reference` holds the turn to BFCL's two multi-turn checks:
the mocks' state after the turn equals the state the reference calls of all turns so far reach
(`state_checker`), and every result the turn's reference calls return is among the results of the
model's calls so far (`response_checker`: a turn that only reads, as `ls`, leaves the state alone,
and a model that skips it must still fail; so must a turn with reference calls where the model made
none, as in BFCL).
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.chat import ExecutedCall
from evalkit.judge.items import check_items
from evalkit.results.records import CheckItem
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks

__all__ = ["state_items", "turn_items"]


def state_items(scenario: Scenario, calls: list[ExecutedCall], upto_turn: int) -> list[CheckItem]:
    """The state and results items for the turns up to `upto_turn` (0-based)."""
    # fresh mocks for both sides, replayed from the start: a turn's state is what all turns so far made
    model, reference = StatefulMocks(scenario), StatefulMocks(scenario)
    reference.replay(scenario.reference.calls)
    produced: list[str] = []  # every result of the model's calls so far (BFCL: all turns, not only this one)
    turn_results: list[tuple[Any, str | None]] = []
    for index in range(upto_turn + 1):
        for done in calls:
            # only calls that ran: an unknown or malformed call changed no state when the run made it
            if done.turn == index and done.known_tool and not done.call.malformed:
                produced.append(_result_key(model.call(done.call.name, done.call.arguments or {})))
        turn_results = reference.replay(scenario.turns[index].reference)
    differ = model.differences(reference)
    missing = _missing([_result_key(r) for r in turn_results], produced)
    # BFCL fails a turn that has reference calls and none of the model's, whatever earlier turns produced
    idle = bool(scenario.turns[upto_turn].reference) and not any(c.turn == upto_turn for c in calls)
    return [
        CheckItem(
            item="state as the reference reaches",
            passed=not differ,
            structural=False,
            detail=f"differs in {differ}" if differ else "",
            kind="state",
        ),
        CheckItem(
            item="state: results include the reference's",
            passed=not missing and not idle,
            structural=False,
            detail=_results_detail(missing, idle),
            kind="state_results",
        ),
    ]


def _results_detail(missing: list[str], idle: bool) -> str:
    if idle:
        return "no call in a turn that has reference calls"
    if missing:
        return f"{len(missing)} of the turn's reference results not produced, first {missing[0][:120]}"
    return ""


def _result_key(outcome: tuple[Any, str | None]) -> str:
    # sorted keys and `str` for what JSON cannot hold: equal results compare equal as text
    return json.dumps(outcome, sort_keys=True, default=str)


def _missing(expected: list[str], produced: list[str]) -> list[str]:
    """`expected` items not in `produced`, one occurrence consumed per match (BFCL's unordered subsequence)."""
    left = list(produced)
    missing = []
    for item in expected:
        if item in left:
            left.remove(item)
        else:
            missing.append(item)
    return missing


def turn_items(scenario: Scenario, calls: list[ExecutedCall], replies: list[str | None]) -> list[CheckItem]:
    """Items of every turn that has a check, with their `turn` and labelled `turn N: ...` (1-based)."""
    items: list[CheckItem] = []
    for index, turn in enumerate(scenario.turns):
        if turn.check is None:
            continue
        mine = [c for c in calls if c.turn == index]
        # a run that stopped early has no answer for the later turns: their reply items fail
        reply = replies[index] if index < len(replies) else None
        found = check_items(scenario, mine, reply, turn.check)
        if turn.check.state_as_reference:
            found += state_items(scenario, calls, index)
        items += [i.model_copy(update={"item": f"turn {index + 1}: {i.item}", "turn": index}) for i in found]
    return items
