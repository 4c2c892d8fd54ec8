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
        known = ", ".join(t.name for t in scenario.tools) or "none"
        error = f"unknown tool {call.name!r}; available tools: {known}"
        return ExecutedCall(call=call, result=None, error=error, known_tool=False, mutating=False)
    if call.arguments is None:
        error = f"arguments for {call.name} are not valid JSON ({call.parse_error}); send a JSON object"
        return ExecutedCall(call=call, result=None, error=error, known_tool=True, mutating=False)
    if state is not None and not tool.results and state.method(call.name) is not None:
        result, failed = state.call(call.name, call.arguments)
        return ExecutedCall(
            call=call, result=result, error=failed, known_tool=True, mutating=tool.mutating and failed is None
        )
    mock = next((r for r in tool.results if args_match(r.when, call.arguments)), tool.default)
    return ExecutedCall(
        call=call, result=mock.returns, error=mock.error, known_tool=True, mutating=tool.mutating and mock.error is None
    )


def result_text(executed: ExecutedCall) -> str:
    """The tool message content the model reads."""
    if executed.error is not None:
        return json.dumps({"error": executed.error})
    return json.dumps(executed.result, ensure_ascii=False)
