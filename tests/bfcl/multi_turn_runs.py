"""Multi-turn runs generated from BFCL's ground truth, judged by evalkit and by BFCL's `multi_turn_checker`.

A run is a list of turns, each a list of steps, each a list of call strings (BFCL's decoded form). The
generated runs: the ground truth itself, and the ground truth with one change in one turn (a call
dropped, a turn left without calls, a harmless read-only call added, an argument changed, a call
made in a turn where BFCL expects none)."""

from __future__ import annotations

import ast
import asyncio
import inspect
from collections.abc import Iterator

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Completion, Sampling, ToolCall
from evalkit.importers.bfcl.reference import bfcl_multi_turn_verdict
from evalkit.judge.verdict import judge_run
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks
from evalkit.strategies import build_stack
from tests.fakes import ScriptedBackend, text

Run = list[list[list[str]]]

__all__ = ["Run", "bfcl_multi_turn_verdict", "evalkit_multi_turn_verdict", "runs"]


def runs(truth: list[list[str]]) -> Iterator[tuple[str, Run]]:
    yield "ground truth", [[list(turn)] if turn else [] for turn in truth]
    for t, turn in enumerate(truth):
        base: Run = [[list(x)] if x else [] for x in truth]
        if turn:
            yield f"turn {t}: no calls", [*base[:t], [], *base[t + 1 :]]
            if len(turn) > 1:
                yield f"turn {t}: last call dropped", [*base[:t], [turn[:-1]], *base[t + 1 :]]
            changed = _changed(turn[-1])
            if changed:
                yield f"turn {t}: argument changed", [*base[:t], [[*turn[:-1], changed]], *base[t + 1 :]]
        else:
            later = next((x for x in truth[t + 1 :] if x), None)
            if later:
                yield f"turn {t}: guessed call", [*base[:t], [[later[0]]], *base[t + 1 :]]


def _changed(call: str) -> str | None:
    node = ast.parse(call, mode="eval").body
    if not isinstance(node, ast.Call):
        return None
    for arg in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            arg.value = arg.value + "_x"
            return ast.unparse(node)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and not isinstance(arg.value, bool):
            arg.value = arg.value + 7
            return ast.unparse(node)
    return None


def _tool_call(text_call: str, mocks: StatefulMocks, index: int) -> ToolCall:
    """A BFCL call string as a tool call, positional arguments named from the backend method's signature."""
    node = ast.parse(text_call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    params = list(inspect.signature(mocks.method(node.func.id)).parameters)
    arguments = {params[i]: ast.literal_eval(arg) for i, arg in enumerate(node.args)}
    arguments |= {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return ToolCall(id=f"m{index}", name=node.func.id, arguments=arguments)


def evalkit_multi_turn_verdict(scenario: Scenario, run: Run) -> bool:
    script: list[Completion] = []
    mocks = StatefulMocks(scenario)
    n = 0
    for steps in run:
        for step in steps:
            calls = []
            for call in step:
                calls.append(_tool_call(call, mocks, n))
                n += 1
            script.append(Completion(tool_calls=calls, finish_reason="tool_calls"))
        script.append(text("Done."))
    policy = RetryPolicy(attempts=1, base_delay_s=0, max_delay_s=0)
    loop = run_loop(
        scenario.model_copy(update={"max_iterations": 100}),
        build_stack([("trust_text", {})]),
        ScriptedBackend(script),
        mode="native",
        sampling=Sampling(seed=1),
        run_id="r",
        seed=1,
        policy=policy,
    )
    state, view = asyncio.run(loop)
    verdict = judge_run(scenario, state.outcome, view.executed, state.reply, turn_replies=state.turn_replies)
    return verdict.correct
