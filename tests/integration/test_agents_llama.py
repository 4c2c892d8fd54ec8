"""An agent under test in front of the real llama-server (SmolLM2): its run's calls go through evalkit's
front by the run's URL, and every call the model served is counted to the run, with its tokens.

The reference is independent of the front: a counting pass-through (evalkit/backends/passthrough.py)
sits between evalkit's llama-server backend and the server and counts what llama-server answered.
The agent is tests/agents/fake_agent.py, a program in its own process speaking HTTP (no install)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from evalkit.backends.passthrough import CountingPassThrough, ServedCount
from evalkit.backends.serve import LlamaServer
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.agents.conftest import FAKE, ROOT

pytestmark = pytest.mark.server


class _Counter:
    """A counting pass-through in front of `url`, on an event loop of its own (the run has another)."""

    def __init__(self, url: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.passthrough: CountingPassThrough = self._call(self._start(url))

    def _call(self, coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    async def _start(self, url: str) -> CountingPassThrough:
        self.session = aiohttp.ClientSession()
        passthrough = CountingPassThrough(url, self.session)
        await passthrough.start()
        return passthrough

    async def _stop(self) -> None:
        await self.passthrough.stop()
        await self.session.close()

    def count(self) -> ServedCount:
        return self._call(self._snapshot())

    async def _snapshot(self) -> ServedCount:
        return self.passthrough.count.snapshot()

    def close(self) -> None:
        self._call(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@pytest.fixture
def counted(llama_server: LlamaServer) -> Iterator[_Counter]:
    counter = _Counter(llama_server.url)
    try:
        yield counter
    finally:
        counter.close()


def test_an_agent_run_on_llama_server_has_every_served_call_counted(counted: _Counter, tmp_path: Path) -> None:
    config = tmp_path / "agent-llama.yaml"
    config.write_text(
        f"name: agent-llama\nseed: 7\nruns: 1\nscenarios: [{ROOT / 'scenarios/casual_greeting/hi.yaml'}]\n"
        f"backends:\n  - {{label: smollm2, kind: llama-server, model: smollm2, url: '{counted.passthrough.url}',\n"
        "      timeout_s: 300}\n"
        f"agents:\n  fake: {{command: ['{sys.executable}', '{FAKE}', loop], budget: 6, time_limit_s: 240}}\n",
        encoding="utf-8",
    )
    output = tmp_path / "out.jsonl"
    run_config(load_config(config), output)
    (run,) = load_results([output]).runs
    seen = counted.count()
    assert run.outcome != "infra_error", run.error
    assert not run.simulated
    assert run.served is not None and run.served.calls >= 1
    assert run.served.calls == run.model_calls == len(run.calls) == seen.calls
    assert (seen.errors, seen.no_usage) == (0, 0)
    # the tokens are llama-server's own, as it reported them to the pass-through
    assert (run.served.prompt_tokens, run.served.completion_tokens) == (seen.prompt_tokens, seen.completion_tokens)
    assert run.served.prompt_tokens > 0
