"""Per-turn checks (v2 `turns: [{user, check, reference}]`) and state checks against stateful mocks.

A turn's check sees only the calls made during that turn and that turn's answer, so a model that acts
on a missing datum before the user supplies it fails the turn where it acted, even when the run as a
whole ends in the right place. `state_as_reference` compares the mocks' state after the turn with
the state the reference calls of all turns so far reach (BFCL's multi-turn state check).
"""

from __future__ import annotations

from collections.abc import Callable

from evalkit.results import CheckItem
from evalkit.scenario import Check, Scenario
from evalkit.statemocks import StatefulMocks
from evalkit.strategies.base import ExecutedCall

__all__ = ["state_item", "turn_items"]

ItemBuilder = Callable[[Scenario, list[ExecutedCall], "str | None", Check], list[CheckItem]]


def state_item(scenario: Scenario, calls: list[ExecutedCall], upto_turn: int) -> CheckItem:
    model, reference = StatefulMocks(scenario), StatefulMocks(scenario)
    reference.replay(scenario.reference.calls)
    for index in range(upto_turn + 1):
        for done in calls:
            if done.turn == index and done.known_tool and not done.call.malformed:
                model.call(done.call.name, done.call.arguments or {})
        reference.replay(scenario.turns[index].reference)
    differ = model.differences(reference)
    return CheckItem(item="state as the reference reaches", passed=not differ, structural=False,
                     detail=f"differs in {differ}" if differ else "")


def turn_items(scenario: Scenario, calls: list[ExecutedCall], replies: list[str | None],
               build: ItemBuilder) -> list[CheckItem]:
    """Items of every turn that has a check, labelled `turn N: ...` (1-based)."""
    items: list[CheckItem] = []
    for index, turn in enumerate(scenario.turns):
        if turn.check is None:
            continue
        mine = [c for c in calls if c.turn == index]
        reply = replies[index] if index < len(replies) else None
        found = build(scenario, mine, reply, turn.check)
        if turn.check.state_as_reference:
            found.append(state_item(scenario, calls, index))
        items += [CheckItem(item=f"turn {index + 1}: {i.item}", passed=i.passed, structural=i.structural,
                            detail=i.detail) for i in found]
    return items
