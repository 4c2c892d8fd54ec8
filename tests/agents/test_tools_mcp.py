"""The scenario's tools over MCP give what evalkit's own loop gives: the same tools and schemas, the
same result text and the same state after every call, on every family. Held with the official `mcp`
client over real HTTP against evalkit's server, and evalkit's loop's own executor as the reference."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the agents extra: pip install -e '.[agents]'")

from mcp import Client

from evalkit.agents.tools_mcp import McpToolServer
from evalkit.backends.run_url import RunToken
from evalkit.chat import ToolCall
from evalkit.scenario.mocks import execute_call, result_text
from evalkit.scenario.model import FAMILIES, Scenario, load_scenario
from evalkit.scenario.statemocks import StatefulMocks
from tests.extras import shipped_scenarios


def _calls(scenario: Scenario) -> list[tuple[str, dict[str, Any]]]:
    """The reference's calls, each tool with no arguments, and a tool the scenario does not have."""
    calls = [(c.name, dict(c.arguments)) for c in scenario.reference.calls]
    calls += [(t.name, {}) for t in scenario.tools_at(0)]
    return [*calls, ("no_such_tool", {"x": 1})]


def _loop(scenario: Scenario, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], Any]:
    mocks = StatefulMocks(scenario) if scenario.state else None
    texts = [
        result_text(execute_call(scenario, ToolCall(id=f"c{i}", name=n, arguments=a), mocks))
        for i, (n, a) in enumerate(calls)
    ]
    return texts, mocks


def _per_family() -> list[Scenario]:
    scenarios, _ = shipped_scenarios()
    chosen: dict[str, list[Scenario]] = {}
    for scenario in scenarios:
        picked = chosen.setdefault(scenario.family, [])
        # two of each family, one with stateful mocks where the family has any
        if len(picked) < 2 or (scenario.state and not any(s.state for s in picked)):
            picked.append(scenario)
    # stateful mocks (BFCL's need the bfcl extra): a class of the tests' own, with a call that raises
    shelf = load_scenario(Path(__file__).with_name("shelf.yaml"), ["tests.agents.shelf"])
    return [s for family in FAMILIES for s in chosen.get(family, [])] + [shelf]


SCENARIOS = _per_family()


def test_every_family_is_held() -> None:
    assert {s.family for s in SCENARIOS} == set(FAMILIES)
    assert any(s.state for s in SCENARIOS)  # stateful mocks are among them


async def _over_mcp(server: McpToolServer, scenario: Scenario, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    token = RunToken(scenario.id, 1, f"run/{scenario.id}").encode()
    async with server.open_run(token, scenario) as tools, Client(server.url(token)) as client:
        listed = await client.list_tools()
        texts = []
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error
            texts.append(result.content[0].text)  # type: ignore[union-attr]
        return listed.tools, texts, tools


def test_mcp_results_and_state_equal_the_loops_on_every_family() -> None:
    async def go() -> None:
        server = McpToolServer()
        await server.start()
        try:
            for scenario in SCENARIOS:
                calls = _calls(scenario)
                listed, texts, tools = await _over_mcp(server, scenario, calls)
                expected_texts, expected_mocks = _loop(scenario, calls)
                specs = [t.spec() for t in scenario.tools_at(0)]
                assert [(t.name, t.description, t.input_schema) for t in listed] == [
                    (s.name, s.description, s.parameters) for s in specs
                ], scenario.id
                assert texts == expected_texts, scenario.id
                assert [c.call.name for c in tools.executed] == [n for n, _ in calls]  # every call recorded
                if expected_mocks is not None:
                    assert tools.mocks is not None and tools.mocks.differences(expected_mocks) == [], scenario.id
                    assert json.dumps(texts) != json.dumps([None] * len(texts))
        finally:
            await server.stop()

    asyncio.run(go())


def test_a_path_that_names_no_open_run_is_404() -> None:
    import httpx

    async def go() -> None:
        server = McpToolServer()
        await server.start()
        try:
            async with httpx.AsyncClient() as client:
                answer = await client.post(server.url("nope"), json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert answer.status_code == 404
        finally:
            await server.stop()

    asyncio.run(go())
