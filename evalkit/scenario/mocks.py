"""Executing a model's tool call against a scenario's mocked tools.

Results are deterministic functions of the arguments. A call the harness cannot execute (unknown
tool, unparseable arguments) gets an error result the model can read, as a real agent would send.
"""

from __future__ import annotations

import json

from evalkit.chat import ExecutedCall, ToolCall
from evalkit.scenario.matching import args_match
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks

__all__ = ["execute_call", "result_text"]


def execute_call(scenario: Scenario, call: ToolCall, state: StatefulMocks | None = None) -> ExecutedCall:
    tool = scenario.tool(call.name)
    if tool is None:
        # the error lists the real tools: a model that invented one gets the chance a real agent gives
        known = ", ".join(t.name for t in scenario.tools) or "none"
        error = f"unknown tool {call.name!r}; available tools: {known}"
        return ExecutedCall(call=call, result=None, error=error, known_tool=False, mutating=False)
    if call.arguments is None:
        error = f"arguments for {call.name} are not valid JSON ({call.parse_error}); send a JSON object"
        return ExecutedCall(call=call, result=None, error=error, known_tool=True, mutating=False)
    # a stateful mock answers only tools with no fixed results: a scenario's explicit results win
    if state is not None and not tool.results and state.method(call.name) is not None:
        result, failed = state.call(call.name, call.arguments)
        return ExecutedCall(
            call=call, result=result, error=failed, known_tool=True, mutating=tool.mutating and failed is None
        )
    # the first result whose `when` matches, in the scenario's order; none matching: the tool's default
    mock = next((r for r in tool.results if args_match(r.when, call.arguments)), tool.default)
    return ExecutedCall(
        call=call, result=mock.returns, error=mock.error, known_tool=True, mutating=tool.mutating and mock.error is None
    )


def result_text(executed: ExecutedCall) -> str:
    """The tool message content the model reads."""
    # an error as JSON too: the model reads one format for every result, failed or not
    if executed.error is not None:
        return json.dumps({"error": executed.error})
    return json.dumps(executed.result, ensure_ascii=False)
