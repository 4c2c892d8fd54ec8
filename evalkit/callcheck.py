"""Check items for `check.calls` in v2 scenarios (`schema_version: 2`, or any v2 call field used).

v2 matches required calls to the model's calls one-to-one (a call satisfies at most one required
entry, and an entry with `count: N` needs N calls), can forbid calls beyond the required ones, and
can ask for "any call of these tools". Scenarios without v2 fields keep the v1 items in
`evalkit.checks`, so their verdicts do not change.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from evalkit.callmatch import arguments_match
from evalkit.matching import MatchRules
from evalkit.results import CheckItem
from evalkit.scenario import CallCheck, CallsCheck, Check, Scenario
from evalkit.strategies.base import ExecutedCall

__all__ = ["match_rules", "uses_v2", "v2_call_items"]


def uses_v2(scenario: Scenario) -> bool:
    calls = scenario.check.calls
    if calls is None:
        return False
    entries = any(c.extra_arguments == "forbid" or c.count for c in calls.required)
    fields = entries or calls.extra_calls == "forbid" or bool(calls.any_of) or scenario.check.match is not None
    return fields or scenario.schema_version == 2


def match_rules(check: Check) -> MatchRules:
    if check.match is None:
        return MatchRules()
    return MatchRules(normalise=check.match.normalise, strict_types=check.match.strict_types)


def _assign(
    slots: list[CallCheck], pool: list[ExecutedCall], fits: Callable[[CallCheck, ExecutedCall], bool], ordered: bool
) -> list[int | None]:
    """For each slot, the index of the call it is matched to (one-to-one), or None."""
    if ordered:
        chosen: list[int | None] = []
        position = 0
        for slot in slots:
            found = next((i for i in range(position, len(pool)) if fits(slot, pool[i])), None)
            chosen.append(found)
            position = found + 1 if found is not None else position
        return chosen
    owner: dict[int, int] = {}  # call index -> slot index; maximum bipartite matching (Kuhn)

    def augment(slot: int, seen: set[int]) -> bool:
        for i, call in enumerate(pool):
            if i not in seen and fits(slots[slot], call):
                seen.add(i)
                if i not in owner or augment(owner[i], seen):
                    owner[i] = slot
                    return True
        return False

    for index in range(len(slots)):
        augment(index, set())
    by_slot = {index: call for call, index in owner.items()}
    return [by_slot.get(index) for index in range(len(slots))]


def v2_call_items(
    scenario: Scenario, calls_check: CallsCheck, rules: MatchRules, calls: list[ExecutedCall]
) -> list[CheckItem]:
    valid = [c for c in calls if c.known_tool and not c.call.malformed]
    ordered = calls_check.order == "ordered"

    def args_fit(want: CallCheck, done: ExecutedCall) -> bool:
        tool = scenario.tool(want.name)
        return done.call.name == want.name and arguments_match(
            want.arguments,
            done.call.arguments,
            rules,
            extra=want.extra_arguments,
            schema=tool.parameters if tool else None,
        )

    slots = [want for want in calls_check.required for _ in range(want.count or 1)]
    by_name = _assign(slots, valid, lambda want, done: done.call.name == want.name, ordered)
    by_args = _assign(slots, valid, args_fit, ordered)
    items: list[CheckItem] = []
    start = 0
    for want in calls_check.required:
        span = range(start, start + (want.count or 1))
        start += len(span)
        label = f"called {want.name}" + (" in order" if ordered else "")
        items.append(CheckItem(item=label, passed=all(by_name[i] is not None for i in span), structural=True))
        exact = all(by_args[i] is not None for i in span)
        items.append(
            CheckItem(
                item=f"arguments of {want.name}",
                passed=exact,
                structural=False,
                detail="" if exact else f"wanted {json.dumps(want.arguments)}",
            )
        )
        if want.count:
            made = sum(args_fit(want, done) for done in valid)
            items.append(
                CheckItem(
                    item=f"arguments of {want.name}: exactly {want.count} call(s)",
                    passed=made == want.count,
                    structural=False,
                    detail=f"made {made}",
                )
            )
    if calls_check.extra_calls == "forbid":
        extra = len(calls) - len(slots)
        items.append(
            CheckItem(
                item="no calls beyond the required ones",
                passed=extra <= 0,
                structural=False,
                detail=f"{extra} more" if extra > 0 else "",
            )
        )
    if calls_check.any_of:
        hit = any(c.call.name in calls_check.any_of for c in valid)
        items.append(CheckItem(item=f"called any of {calls_check.any_of}", passed=hit, structural=True))
    return items
