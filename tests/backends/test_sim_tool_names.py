"""The simulated model over HTTP calls a scenario's tool by the name the request offers it under.

An MCP client offers a server's tools under its own names: Cline offers the scenario's `get_patient`
as `evalkit__get_patient` (docs/agents.md, "Cline") and refuses a call of any other name. The rule
(`sim_wire.offered_names`): the tool's own name when offered, else the one offered name ending in
`__<tool>`. The reference is the same conversation with the scenario's own names: call for call, the
same tools with the same arguments, only the names differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from evalkit.backends.sim_server import SimServer
from evalkit.backends.sim_wire import offered_names
from evalkit.scenario.model import Scenario, load_scenario
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
CHAIN = ROOT / "scenarios" / "sequential_reasoning" / "medication_chain.yaml"


def _offered(scenario: Scenario, prefix: str) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": prefix + t.name, "description": t.description,
                                          "parameters": t.parameters}}
        for t in scenario.tools
    ]  # fmt: skip


def _conversation(url: str, scenario: Scenario, prefix: str, seed: int, steps: int = 5) -> list[tuple[str, str]]:
    """The calls the model makes, step by step, each answered with the same tool text."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": scenario.system},
        {"role": "user", "content": scenario.user_text(0)},
    ]
    made: list[tuple[str, str]] = []
    for _ in range(steps):
        body = {"model": "small-local", "messages": messages, "tools": _offered(scenario, prefix), "seed": seed}
        message = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30).json()["choices"][0]["message"]
        calls = message.get("tool_calls") or []
        if not calls:
            break
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for c in calls:
            made.append((c["function"]["name"], c["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps({"ok": True})})
    return made


def test_a_whole_tool_chain_is_called_by_the_offered_names_with_the_draws_of_the_scenario_s_names() -> None:
    scenario = load_scenario(CHAIN)
    lengths = []
    with sim_http(SimServer("small-local", [scenario])) as url:
        for seed in range(12):
            own = _conversation(url, scenario, "", seed)
            prefixed = _conversation(url, scenario, "evalkit__", seed)
            # a name the model invented is not a scenario tool's: it stays as invented
            renamed = [(f"evalkit__{n}" if n in {t.name for t in scenario.tools} else n, a) for n, a in own]
            assert prefixed == renamed, seed
            lengths.append(len(own))
    assert max(lengths) >= 2, "the chain progresses past its first call on some seed"


def test_progress_through_the_chain_is_read_from_calls_of_the_offered_names() -> None:
    # the strong profile calls the whole chain: every intended call is made once, in order
    scenario = load_scenario(CHAIN)
    intended = [c.name for c in scenario.skill().calls]
    with sim_http(SimServer("strong", [scenario])) as url:
        made = _conversation(url, scenario, "evalkit__", seed=1, steps=len(intended) + 1)
    assert [n for n, _ in made][: len(intended)] == [f"evalkit__{n}" for n in intended]


def test_the_offered_name_is_the_tool_s_own_first_else_the_one_ending_in_its_name() -> None:
    assert offered_names(["get_x"], ["get_x", "evalkit__get_x"]) == {}  # its own name: nothing to rename
    assert offered_names(["get_x", "get_y"], ["read_files", "evalkit__get_x", "evalkit__get_y"]) == {
        "get_x": "evalkit__get_x",
        "get_y": "evalkit__get_y",
    }
    assert offered_names(["get_x"], ["a__get_x", "b__get_x"]) == {}  # two servers offer it: no guess
    assert offered_names(["get_x"], ["evalkit_get_x", "xget_x"]) == {}  # not `<server>__get_x`
