"""A run's identity in its model URL (`/run/<token>/v1`): seeded, reproducible draws and every served
call attributed to its run, without the agent sending anything but its requests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from aiohttp import web

from evalkit.backends.passthrough import CountingPassThrough
from evalkit.backends.run_url import RunToken, split_run_path
from evalkit.backends.sim_server import SimServer
from evalkit.scenario.model import load_scenario
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
CHAIN = load_scenario(ROOT / "scenarios/sequential_reasoning/medication_chain.yaml")


def test_a_token_carries_scenario_seed_and_run_id_and_nothing_else_decodes() -> None:
    token = RunToken("seq-medication-chain", 123, "sim/native/pydantic-ai/seq-medication-chain/4")
    assert RunToken.decode(token.encode()) == token
    assert "/" not in token.encode() and "=" not in token.encode()
    assert split_run_path(token.path() + "/v1/chat/completions") == (token.encode(), "/v1/chat/completions")
    assert split_run_path("/v1/chat/completions") == (None, "/v1/chat/completions")
    for junk in ["", "x", "e30", RunToken("a", 1, "r").encode()[:-2], "WzEsMiwzXQ"]:  # e30: {}; WzEsMiwzXQ: [1,2,3]
        assert RunToken.decode(junk) is None


def _ask(url: str, seed: int | None = None, system: str = "You are a helpful assistant.") -> list[Any]:
    """The tool calls the model answers CHAIN's opening with (an agent's own system prompt, no tools' seed)."""
    body: dict[str, Any] = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": CHAIN.user_text(0)}],
        "tools": [{"type": "function", "function": t.spec().model_dump()} for t in CHAIN.tools],
    }
    if seed is not None:
        body["seed"] = seed
    answer = httpx.post(url + "/chat/completions", json=body, timeout=30)
    answer.raise_for_status()
    message = answer.json()["choices"][0]["message"]
    return [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []] + [
        message["content"]
    ]


def test_serve_sim_draws_from_the_tokens_seed_and_scenario_whatever_the_agent_sends() -> None:
    with sim_http(SimServer("small-local", [CHAIN])) as root:
        runs = [RunToken(CHAIN.id, seed, f"r/{seed}") for seed in range(12)]
        first = [_ask(root + run.path() + "/v1") for run in runs]
        # the same run asked again, with an agent's own fixed seed and another system prompt: the same draw
        again = [_ask(root + run.path() + "/v1", seed=0, system="You are an agent.") for run in runs]
        assert first == again
        assert len({str(d) for d in first}) > 1  # the runs' seeds give different draws
        # and the draw is the run's own: a request carrying the seed as evalkit's own header gets it too
        for run, drawn in zip(runs, first, strict=True):
            answer = httpx.post(
                root + "/v1/chat/completions",
                json={
                    "model": "m",
                    "messages": [{"role": "user", "content": CHAIN.user_text(0)}],
                    "tools": [{"type": "function", "function": t.spec().model_dump()} for t in CHAIN.tools],
                },
                headers={"X-Evalkit-Seed": str(run.seed), "X-Evalkit-Scenario": CHAIN.id, "X-Evalkit-Run": run.run_id},
                timeout=30,
            ).json()["choices"][0]["message"]
            calls = [(c["function"]["name"], c["function"]["arguments"]) for c in answer.get("tool_calls") or []]
            assert [*calls, answer["content"]] == drawn
        assert httpx.post(root + "/run/notatoken/v1/chat/completions", json={}, timeout=30).status_code == 404


def test_the_pass_through_strips_the_prefix_and_counts_each_runs_calls() -> None:
    seen: list[str] = []

    async def model(request: web.Request) -> web.Response:
        seen.append(request.path_qs)
        return web.json_response({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}})

    async def go() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", model)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        upstream = f"http://127.0.0.1:{runner.addresses[0][1]}"
        async with aiohttp.ClientSession() as session:
            counter = CountingPassThrough(upstream, session)
            await counter.start()
            a, b = RunToken("s", 1, "run-a"), RunToken("s", 2, "run-b")
            async with httpx.AsyncClient() as client:
                for token, times in ((a, 3), (b, 1)):
                    for _ in range(times):
                        await client.post(f"{counter.url}{token.path()}/v1/chat/completions?x=1", json={})
                await client.get(f"{counter.url}{a.path()}/v1/models")  # not a model call
                await client.post(f"{counter.url}/v1/chat/completions", json={})  # no run named
            await counter.stop()
        await runner.cleanup()
        assert seen == ["/v1/chat/completions?x=1"] * 4 + ["/v1/models", "/v1/chat/completions"]
        assert counter.count.calls == 5
        assert (counter.by_run[a.encode()].calls, counter.by_run[b.encode()].calls) == (3, 1)
        assert counter.by_run[a.encode()].prompt_tokens == 15 and set(counter.by_run) == {a.encode(), b.encode()}

    asyncio.run(go())
