"""The check items of one `check:` (the scenario's, or one turn's) for the calls and reply it sees.

Each item carries a `kind`; `evalkit.judge.verdict` decides the failure category from kinds alone,
so rewording a label changes nothing but the label.
"""

from __future__ import annotations

import json

from evalkit.chat import ExecutedCall
from evalkit.judge.calls import call_items, valid_calls
from evalkit.judge.degenerate import degenerate_reason
from evalkit.results.records import CheckItem
from evalkit.scenario.matching import mentions
from evalkit.scenario.model import Check, Scenario

__all__ = ["check_items"]


def _terminal_items(scenario: Scenario, check: Check, calls: list[ExecutedCall]) -> list[CheckItem]:
    tool = scenario.terminal_tool or ""
    final = [c for c in valid_calls(calls) if c.call.name == tool]
    items = [CheckItem(item=f"terminal tool {tool} called", passed=bool(final), structural=True, kind="terminal_call")]
    for arg, facts in check.terminal.contains.items() if check.terminal else []:
        value = json.dumps((final[-1].call.arguments or {}).get(arg, "")) if final else ""
        missing = [f for f in facts if not mentions(value, f)]
        detail = f"missing {missing}" if missing else ""
        label = f"{tool}.{arg} mentions {facts}"
        items.append(CheckItem(item=label, passed=not missing, structural=False, detail=detail, kind="terminal_facts"))
    return items


def _reply_items(check: Check, reply: str | None) -> list[CheckItem]:
    text = reply or ""
    items: list[CheckItem] = []
    if check.reply or check.asks_user:
        items.append(CheckItem(item="gave a final reply", passed=bool(text.strip()), structural=True, kind="reply"))
    if check.reply:
        for needle in check.reply.contains:
            ok = mentions(text, needle)
            items.append(
                CheckItem(item=f"reply mentions {needle!r}", passed=ok, structural=False, kind="reply_mentions")
            )
        for needle in check.reply.not_contains:
            ok = not mentions(text, needle)
            items.append(CheckItem(item=f"reply avoids {needle!r}", passed=ok, structural=False, kind="reply_avoids"))
    if check.asks_user:
        items.append(CheckItem(item="asks the user", passed="?" in text, structural=True, kind="asks_user"))
        wanted = check.asks_user.mentions
        if wanted:
            ok = any(mentions(text, w) for w in wanted)
            label = f"question mentions any of {wanted}"
            items.append(CheckItem(item=label, passed=ok, structural=False, kind="question_mentions"))
    return items


def check_items(scenario: Scenario, calls: list[ExecutedCall], reply: str | None, check: Check) -> list[CheckItem]:
    """Every item of `check` for these calls and this reply (state items are `evalkit.judge.turns`')."""
    items = call_items(scenario, check, calls)
    if check.terminal or (scenario.terminal_tool and check.calls):
        items += _terminal_items(scenario, check, calls)
    if check.no_tool_calls:
        names = sorted({c.call.name for c in calls})
        detail = f"called {names}" if names else ""
        items.append(
            CheckItem(item="no tool calls", passed=not calls, structural=True, detail=detail, kind="no_tool_calls")
        )
    items += _reply_items(check, reply)
    degenerate = degenerate_reason(reply)
    if degenerate:
        label = "reply is not degenerate"
        items.append(CheckItem(item=label, passed=False, structural=True, detail=degenerate, kind="not_degenerate"))
    return items
