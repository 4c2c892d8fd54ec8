"""A scenario checked against itself: its reference solution, run through its own mocks and check.

`evalkit validate` calls `reference_problems`. Every reference call must hit one of its tool's
`results` rules (not the default: a rule no correct call can reach is a typo), and the reference as
a whole (its calls, then its reply unless it ends on the terminal tool) must be judged `correct` by
the scenario's check. This is what a simulated run cannot show: the simulated model ignores what
the mocks return, so a mock that never matches goes unnoticed there.
"""

from __future__ import annotations

import dataclasses

from evalkit.chat import ToolCall
from evalkit.judge.verdict import judge_run
from evalkit.results.records import Outcome
from evalkit.scenario.matching import args_match
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks

__all__ = ["reference_problems"]


def reference_problems(scenario: Scenario) -> list[str]:
    """What is wrong with the scenario's reference solution, one '<scenario>: <field>: <problem>' each."""
    problems: list[str] = []
    executed = []
    mocks = StatefulMocks(scenario) if scenario.state else None
    # v2 turns carry their own reference calls, made during that turn
    refs = [(0, f"reference.calls.{i}", ref) for i, ref in enumerate(scenario.reference.calls)]
    refs += [
        (t, f"turns.{t}.reference.{i}", ref)
        for t, turn in enumerate(scenario.turns)
        for i, ref in enumerate(turn.reference)
    ]
    for n, (turn, where, ref) in enumerate(refs):
        call = ToolCall(id=f"ref_{n}", name=ref.name, arguments=ref.arguments)
        executed.append(dataclasses.replace(execute_call(scenario, call, mocks), turn=turn))
        tool = scenario.tool(ref.name)
        stateful = mocks is not None and tool is not None and not tool.results and mocks.method(ref.name)
        if tool is not None and not stateful and not any(args_match(rule.when, ref.arguments) for rule in tool.results):
            problems.append(f"{where} ({ref.name}): matches no `results` rule of the tool, only its default")
    ends_on_terminal = bool(executed and scenario.terminal_tool and executed[-1].call.name == scenario.terminal_tool)
    outcome: Outcome = "terminal_tool" if ends_on_terminal else "final_answer"
    reply = None if ends_on_terminal else scenario.reference.reply
    turn_replies = [reply if t == len(scenario.turns) - 1 else None for t in range(len(scenario.turns))]
    verdict = judge_run(scenario, outcome, executed, reply, turn_replies=turn_replies)
    if not verdict.correct:
        failed = "; ".join(f"{i.item}" + (f" ({i.detail})" if i.detail else "") for i in verdict.items if not i.passed)
        problems.append(f"reference: its own check fails it: {failed}")
    return [f"scenario {scenario.id}: {p}" for p in problems]
