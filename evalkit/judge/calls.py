"""Check items for `check.calls`: which of the model's calls satisfy which required entries.

Required calls are matched one-to-one (each executed call satisfies at most one entry), by one
assignment rule, `assign`: in order, each entry takes the first fitting call after the previous
entry's; unordered, a maximum bipartite matching (Kuhn's augmenting paths). With `prefer`, calls
that fit exactly (name and arguments) are taken before calls that fit by name alone.

v1 scenarios get the v1 items (an entry is "called" by name; its arguments are a separate item).
v2 scenarios (`schema_version: 2`, or any v2 call field used) add `count`, `extra_arguments`,
`extra_calls: forbid`, `any_of` and the `match` rules; see `evalkit.judge.arguments`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from evalkit.chat import ExecutedCall
from evalkit.judge.arguments import arguments_match
from evalkit.results.records import CheckItem
from evalkit.scenario.matching import MatchRules, mismatch
from evalkit.scenario.model import CallCheck, CallsCheck, Check, Scenario

__all__ = ["assign", "call_items", "match_rules", "uses_v2", "valid_calls"]

Fits = Callable[[int, int], bool]  # (entry index, call index) -> does the call satisfy the entry


def valid_calls(calls: list[ExecutedCall]) -> list[ExecutedCall]:
    return [c for c in calls if c.known_tool and not c.call.malformed]


def _ordered(slots: int, calls: int, fits: Fits, prefer: Fits | None) -> dict[int, int]:
    chosen: dict[int, int] = {}
    position = 0
    for slot in range(slots):
        after = range(position, calls)
        pick = next((c for c in after if prefer(slot, c)), None) if prefer else None
        pick = pick if pick is not None else next((c for c in after if fits(slot, c)), None)
        if pick is not None:
            chosen[slot] = pick
            position = pick + 1
    return chosen


def _matching(slots: list[int], calls: list[int], fits: Fits) -> dict[int, int]:
    """A maximum one-to-one matching of slots to calls (Kuhn's augmenting paths): slot -> call."""
    owner: dict[int, int] = {}

    def augment(slot: int, seen: set[int]) -> bool:
        for c in calls:
            if c not in seen and fits(slot, c):
                seen.add(c)
                if c not in owner or augment(owner[c], seen):
                    owner[c] = slot
                    return True
        return False

    for slot in slots:
        augment(slot, set())
    return {slot: c for c, slot in owner.items()}


def assign(slots: int, calls: int, fits: Fits, *, ordered: bool, prefer: Fits | None = None) -> dict[int, int]:
    """Entry index -> call index, one-to-one, for `slots` entries and `calls` calls."""
    if ordered:
        return _ordered(slots, calls, fits, prefer)
    if prefer is None:
        return _matching(list(range(slots)), list(range(calls)), fits)
    exact = _matching(list(range(slots)), list(range(calls)), prefer)
    used = set(exact.values())
    rest = _matching([s for s in range(slots) if s not in exact], [c for c in range(calls) if c not in used], fits)
    return exact | rest


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


def _arguments_problem(want: CallCheck, call: ExecutedCall) -> str | None:
    if call.call.arguments is None:
        return "arguments did not parse"
    return mismatch(want.arguments, call.call.arguments)


def _v1_items(calls_check: CallsCheck, calls: list[ExecutedCall]) -> list[CheckItem]:
    wanted, valid = calls_check.required, valid_calls(calls)
    ordered = calls_check.order == "ordered"

    def named(w: int, c: int) -> bool:
        return valid[c].call.name == wanted[w].name

    def exact(w: int, c: int) -> bool:
        return named(w, c) and _arguments_problem(wanted[w], valid[c]) is None

    chosen = assign(len(wanted), len(valid), named, ordered=ordered, prefer=exact)
    items: list[CheckItem] = []
    for w, want in enumerate(wanted):
        call = valid[chosen[w]] if w in chosen else None
        label = f"called {want.name}" + (" in order" if ordered else "")
        detail = "" if call else "no matching call left (each call counts once)"
        items.append(CheckItem(item=label, passed=call is not None, structural=True, detail=detail, kind="call"))
        if want.arguments:
            problem = _arguments_problem(want, call) if call else "not called"
            detail = f"wanted {json.dumps(want.arguments)}: {problem}" if problem else ""
            items.append(
                CheckItem(
                    item=f"arguments of {want.name}",
                    passed=problem is None,
                    structural=False,
                    detail=detail,
                    kind="arguments",
                )
            )
    return items


def _v2_items(
    scenario: Scenario, calls_check: CallsCheck, rules: MatchRules, calls: list[ExecutedCall]
) -> list[CheckItem]:
    valid = valid_calls(calls)
    ordered = calls_check.order == "ordered"
    slots = [want for want in calls_check.required for _ in range(want.count or 1)]

    def args_fit(want: CallCheck, done: ExecutedCall) -> bool:
        tool = scenario.tool(want.name)
        schema = tool.parameters if tool else None
        return done.call.name == want.name and arguments_match(
            want.arguments, done.call.arguments, rules, extra=want.extra_arguments, schema=schema
        )

    by_name = assign(len(slots), len(valid), lambda s, c: valid[c].call.name == slots[s].name, ordered=ordered)
    by_args = assign(len(slots), len(valid), lambda s, c: args_fit(slots[s], valid[c]), ordered=ordered)
    items: list[CheckItem] = []
    start = 0
    for want in calls_check.required:
        span = range(start, start + (want.count or 1))
        start += len(span)
        label = f"called {want.name}" + (" in order" if ordered else "")
        items.append(CheckItem(item=label, passed=all(i in by_name for i in span), structural=True, kind="call"))
        exact = all(i in by_args for i in span)
        detail = "" if exact else f"wanted {json.dumps(want.arguments)}"
        items.append(
            CheckItem(item=f"arguments of {want.name}", passed=exact, structural=False, detail=detail, kind="arguments")
        )
        if want.count:
            made = sum(args_fit(want, done) for done in valid)
            label = f"arguments of {want.name}: exactly {want.count} call(s)"
            items.append(
                CheckItem(
                    item=label, passed=made == want.count, structural=False, detail=f"made {made}", kind="call_count"
                )
            )
    if calls_check.extra_calls == "forbid":
        extra = len(calls) - len(slots)
        detail = f"{extra} more" if extra > 0 else ""
        label = "no calls beyond the required ones"
        items.append(CheckItem(item=label, passed=extra <= 0, structural=False, detail=detail, kind="extra_calls"))
    if calls_check.any_of:
        hit = any(c.call.name in calls_check.any_of for c in valid)
        label = f"called any of {calls_check.any_of}"
        items.append(CheckItem(item=label, passed=hit, structural=True, kind="any_call"))
    return items


def call_items(scenario: Scenario, check: Check, calls: list[ExecutedCall]) -> list[CheckItem]:
    """The items of `check.calls` (required, forbidden, extra, any-of) for these calls."""
    if check.calls is None:
        return []
    if uses_v2(scenario):
        items = _v2_items(scenario, check.calls, match_rules(check), calls)
    else:
        items = _v1_items(check.calls, calls)
    for name in check.calls.forbidden:
        used = any(c.call.name == name for c in calls)
        items.append(CheckItem(item=f"never called {name}", passed=not used, structural=True, kind="forbidden_call"))
    return items
