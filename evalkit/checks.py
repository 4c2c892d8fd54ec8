"""Deciding a run: the scenario's check items, `completed`, `correct` and the failure category.

`completed` means the workflow reached its goal structurally (the required tools were called, the
terminal tool was reached, no forbidden call was made, a reply was given); `correct` adds the content
checks (argument values, facts, reply text). This mirrors Forge's Cmp and Scr columns.

Arguments are matched by `evalkit.matching` (one set of rules at every depth). Required calls are
matched one-to-one: each executed call satisfies at most one required entry (ordered: in sequence;
unordered: a maximum bipartite matching, exact matches first). A final reply that
`evalkit.degenerate` flags (template tokens, a loop of lines) fails a structural item whatever the
check says, and the run is `degenerate_output`. A run whose "no tool calls" item failed is
`unneeded_tool_call` even when it looped to the iteration limit (so is a forbidden call at the limit).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from evalkit.callcheck import match_rules, uses_v2, v2_call_items
from evalkit.degenerate import degenerate_reason
from evalkit.matching import mentions, mismatch
from evalkit.results import CheckItem, FailureCategory, Outcome
from evalkit.scenario import CallCheck, Check, Scenario
from evalkit.strategies.base import ExecutedCall
from evalkit.turncheck import state_items, turn_items

__all__ = ["Verdict", "judge_run"]

_ENDED_NORMALLY = ("final_answer", "terminal_tool")


@dataclass(frozen=True)
class Verdict:
    completed: bool
    correct: bool
    items: list[CheckItem]
    failure: FailureCategory | None


def _valid(calls: list[ExecutedCall]) -> list[ExecutedCall]:
    return [c for c in calls if c.known_tool and not c.call.malformed]


def _arguments_problem(want: CallCheck, call: ExecutedCall) -> str | None:
    if call.call.arguments is None:
        return "arguments did not parse"
    return mismatch(want.arguments, call.call.arguments)


def _assign(wants: list[int], calls: list[int], fits: Callable[[int, int], bool]) -> dict[int, int]:
    """A maximum one-to-one matching of wants to calls (Kuhn's augmenting paths): want -> call."""
    owner: dict[int, int] = {}

    def augment(w: int, seen: set[int]) -> bool:
        for c in calls:
            if c not in seen and fits(w, c):
                seen.add(c)
                if c not in owner or augment(owner[c], seen):
                    owner[c] = w
                    return True
        return False

    for w in wants:
        augment(w, set())
    return {w: c for c, w in owner.items()}


def _unordered(wanted: list[CallCheck], calls: list[ExecutedCall]) -> dict[int, int]:
    """Exact matches first, then the rest by name alone among the calls left over."""

    def named(w: int, c: int) -> bool:
        return calls[c].call.name == wanted[w].name

    exact = _assign(
        list(range(len(wanted))),
        list(range(len(calls))),
        lambda w, c: named(w, c) and _arguments_problem(wanted[w], calls[c]) is None,
    )
    used = set(exact.values())
    rest = _assign(
        [w for w in range(len(wanted)) if w not in exact], [c for c in range(len(calls)) if c not in used], named
    )
    return exact | rest


def _ordered(wanted: list[CallCheck], calls: list[ExecutedCall]) -> dict[int, int]:
    chosen: dict[int, int] = {}
    position = 0
    for w, want in enumerate(wanted):
        named = [i for i in range(position, len(calls)) if calls[i].call.name == want.name]
        exact = [i for i in named if _arguments_problem(want, calls[i]) is None]
        pick = exact[0] if exact else (named[0] if named else None)
        if pick is not None:
            chosen[w] = pick
            position = pick + 1
    return chosen


def _required_items(required: list[CallCheck], ordered: bool, calls: list[ExecutedCall]) -> list[CheckItem]:
    valid = _valid(calls)
    chosen = _ordered(required, valid) if ordered else _unordered(required, valid)
    items: list[CheckItem] = []
    for w, want in enumerate(required):
        call = valid[chosen[w]] if w in chosen else None
        label = f"called {want.name}" + (" in order" if ordered else "")
        items.append(
            CheckItem(
                item=label,
                passed=call is not None,
                structural=True,
                detail="" if call else "no matching call left (each call counts once)",
            )
        )
        if want.arguments:
            problem = _arguments_problem(want, call) if call else "not called"
            items.append(
                CheckItem(
                    item=f"arguments of {want.name}",
                    passed=problem is None,
                    structural=False,
                    detail=f"wanted {json.dumps(want.arguments)}: {problem}" if problem else "",
                )
            )
    return items


def _terminal_items(scenario: Scenario, check: Check, calls: list[ExecutedCall]) -> list[CheckItem]:
    tool = scenario.terminal_tool or ""
    final = [c for c in _valid(calls) if c.call.name == tool]
    items = [CheckItem(item=f"terminal tool {tool} called", passed=bool(final), structural=True)]
    for arg, facts in check.terminal.contains.items() if check.terminal else []:
        value = json.dumps((final[-1].call.arguments or {}).get(arg, "")) if final else ""
        missing = [f for f in facts if not mentions(value, f)]
        items.append(
            CheckItem(
                item=f"{tool}.{arg} mentions {facts}",
                passed=not missing,
                structural=False,
                detail=f"missing {missing}" if missing else "",
            )
        )
    return items


def _reply_items(check: Check, reply: str | None) -> list[CheckItem]:
    text = reply or ""
    items: list[CheckItem] = []
    if check.reply or check.asks_user:
        items.append(CheckItem(item="gave a final reply", passed=bool(text.strip()), structural=True))
    if check.reply:
        for needle in check.reply.contains:
            items.append(CheckItem(item=f"reply mentions {needle!r}", passed=mentions(text, needle), structural=False))
        for needle in check.reply.not_contains:
            items.append(
                CheckItem(item=f"reply avoids {needle!r}", passed=not mentions(text, needle), structural=False)
            )
    if check.asks_user:
        items.append(CheckItem(item="asks the user", passed="?" in text, structural=True))
        wanted = check.asks_user.mentions
        if wanted:
            ok = any(mentions(text, w) for w in wanted)
            items.append(CheckItem(item=f"question mentions any of {wanted}", passed=ok, structural=False))
    return items


def _items(scenario: Scenario, calls: list[ExecutedCall], reply: str | None, check: Check) -> list[CheckItem]:
    items: list[CheckItem] = []
    if check.calls and uses_v2(scenario):
        items += v2_call_items(scenario, check.calls, match_rules(check), calls)
    elif check.calls:
        items += _required_items(check.calls.required, check.calls.order == "ordered", calls)
    if check.calls:
        for name in check.calls.forbidden:
            used = any(c.call.name == name for c in calls)
            items.append(CheckItem(item=f"never called {name}", passed=not used, structural=True))
    if check.terminal or (scenario.terminal_tool and check.calls):
        items += _terminal_items(scenario, check, calls)
    if check.no_tool_calls:
        names = sorted({c.call.name for c in calls})
        items.append(
            CheckItem(
                item="no tool calls", passed=not calls, structural=True, detail=f"called {names}" if names else ""
            )
        )
    items += _reply_items(check, reply)
    degenerate = degenerate_reason(reply)
    if degenerate:
        items.append(CheckItem(item="reply is not degenerate", passed=False, structural=True, detail=degenerate))
    return items


def _category(outcome: Outcome, items: list[CheckItem], calls: list[ExecutedCall]) -> FailureCategory:
    failed = [i for i in items if not i.passed]
    # per-turn items read "turn N: <item>"; the category looks at the item itself
    names = [i.item.split(": ", 1)[1] if i.item.startswith("turn ") else i.item for i in failed]
    if outcome in ("infra_error", "escalated"):
        return outcome
    if "no tool calls" in names:
        return "unneeded_tool_call"
    if outcome == "iteration_limit":
        return "unneeded_tool_call" if any(n.startswith("never called") for n in names) else outcome
    if "reply is not degenerate" in names:
        return "degenerate_output"
    if any(i.structural for i in failed) or outcome not in _ENDED_NORMALLY:
        # a call whose name was lost in broken output is malformed, not an invented tool
        if any(not c.known_tool and not c.call.name_lost for c in calls):
            return "hallucinated_tool"
        if any(c.call.malformed for c in calls):
            return "malformed_call"
        return "premature_answer" if calls else "text_instead_of_tool"
    if any(n.startswith(("arguments of", "terminal", "state")) or "." in n.split(" ")[0] for n in names):
        return "wrong_arguments"
    return "wrong_answer"


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
    items = _items(scenario, calls, reply, scenario.check)
    if scenario.check.state_as_reference:
        items += state_items(scenario, calls, len(scenario.turns) - 1)
    items += turn_items(scenario, calls, turn_replies or [], _items)
    structural_ok = all(i.passed for i in items if i.structural)
    completed = outcome in _ENDED_NORMALLY and structural_ok
    correct = completed and all(i.passed for i in items)
    failure = None if correct or outcome == "unsupported" else _category(outcome, items, calls)
    return Verdict(completed=completed, correct=correct, items=items, failure=failure)
