"""What a phase serves its agents: a model URL per run and the scenario's tools over MCP.

Per backend entry, a model front: `evalkit serve sim`'s application (evalkit/backends/sim_server.py)
answering from the entry's own backend object, so a recorded or replayed backend records and replays
an agent's calls as it does evalkit's, and the simulated model draws from the run's seed. Each run
registers a `RunWatch` under its token: the front numbers the run's calls, keeps what it served (the
transcript), and refuses a call past the budget, which sets `over` (the runner then ends the agent).
One MCP server (evalkit/agents/tools_mcp.py) serves every run's tools at its own path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

from aiohttp import web

from evalkit.agents.tools_mcp import McpToolServer, RunTools
from evalkit.backends.base import Backend
from evalkit.backends.run_url import RunToken
from evalkit.backends.sim_server import SimServer
from evalkit.backends.sim_wire import SimCall
from evalkit.chat import CallContext, Completion
from evalkit.errors import ReplayMiss
from evalkit.scenario.model import Scenario

__all__ = ["AgentServices", "RunWatch"]


@dataclass
class RunWatch:
    """One run's served calls, in order; whether it asked for more than its budget (`over`), or asked
    for a call a replay has no answer to (`miss`); `stop` is set by either: the runner ends the agent."""

    budget: int
    placeholders: dict[str, str] = field(default_factory=dict)  # CallContext.placeholders of its calls
    served: list[tuple[SimCall, Completion]] = field(default_factory=list)
    admitted: int = 0
    refused: int = 0
    in_flight: int = 0  # admitted calls the model has not finished
    model_busy_at_limit: bool = False  # a call was in flight when the time limit passed: the wait was the model's
    over: asyncio.Event = field(default_factory=asyncio.Event)
    miss: ReplayMiss | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def time_limit_passed(self) -> None:
        self.model_busy_at_limit = self.in_flight > 0


class _Watcher:
    """The front's observer: the runs open on it, by token."""

    def __init__(self) -> None:
        self.runs: dict[str, RunWatch] = {}

    def admit(self, run: RunToken, context: CallContext) -> CallContext | str:
        watch = self.runs.get(run.encode())
        if watch is None:
            return f"no run {run.run_id!r} is open on this server"
        if watch.miss is not None:  # the run is over: not a call of the agent's to count
            return str(watch.miss)
        # refused, not served: a call past the budget costs the model server nothing, and ends the run
        if watch.admitted >= watch.budget:
            watch.refused += 1
            watch.over.set()
            watch.stop.set()
            return f"evalkit: run {run.run_id} is past its budget of {watch.budget} served model calls"
        watch.admitted += 1
        watch.in_flight += 1
        # numbered by the run, not by the agent: an agent's retries and parallel calls count alike
        return context.model_copy(update={"call_index": watch.admitted - 1, "placeholders": watch.placeholders})

    def missed(self, run: RunToken, miss: ReplayMiss) -> None:
        watch = self.runs.get(run.encode())
        if watch is not None and watch.miss is None:
            watch.miss, watch.admitted = miss, watch.admitted - 1  # never counted toward the budget
            watch.stop.set()

    def served(self, run: RunToken, call: SimCall, completion: Completion) -> None:
        watch = self.runs.get(run.encode())
        if watch is not None:
            watch.served.append((call, completion))

    def finished(self, run: RunToken) -> None:
        watch = self.runs.get(run.encode())
        if watch is not None:
            watch.in_flight -= 1


class _Front:
    def __init__(self, backend: Backend, model: str, scenarios: Sequence[Scenario]):
        self.watcher = _Watcher()
        self.server = SimServer(model, scenarios, backend=backend, observer=self.watcher)
        # an agent that is stopped drops its connection: its call to the model is cancelled with it, rather
        # than held until the backend's own timeout (a real model: minutes)
        self.runner = web.AppRunner(self.server.app(), access_log=None, handler_cancellation=True)
        self.port = 0

    async def start(self) -> None:
        await self.runner.setup()
        # loopback only, on a port the OS picks: no other host reaches it, and phases never collide
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.port = self.runner.addresses[0][1]


class AgentServices:
    """The model fronts (one per backend label) and the MCP tool server of one phase."""

    def __init__(self) -> None:
        self.fronts: dict[str, _Front] = {}
        self.tools: McpToolServer | None = None

    @classmethod
    async def open(
        cls, backends: Mapping[str, Backend], models: Mapping[str, str], scenarios: Sequence[Scenario]
    ) -> AgentServices:
        services = cls()
        try:
            services.tools = McpToolServer()
            await services.tools.start()
            for label, backend in backends.items():
                front = services.fronts[label] = _Front(backend, models[label], scenarios)
                await front.start()
        except BaseException:
            await services.aclose()
            raise
        return services

    def model_url(self, label: str, token: RunToken) -> str:
        return f"http://127.0.0.1:{self.fronts[label].port}{token.path()}/v1"

    def mcp_url(self, token: RunToken) -> str:
        assert self.tools is not None
        return self.tools.url(token.encode())

    @contextlib.asynccontextmanager
    async def open_run(
        self, label: str, token: RunToken, scenario: Scenario, budget: int, placeholders: dict[str, str]
    ) -> AsyncIterator[tuple[RunWatch, RunTools]]:
        assert self.tools is not None
        runs = self.fronts[label].watcher.runs
        key = token.encode()
        watch = runs[key] = RunWatch(budget, placeholders)
        # the token is closed when the run ends, however it ends: a late call of its agent is refused
        try:
            async with self.tools.open_run(key, scenario) as tools:
                yield watch, tools
        finally:
            del runs[key]

    async def aclose(self) -> None:
        for front in self.fronts.values():
            await front.runner.cleanup()
        self.fronts.clear()
        if self.tools is not None:
            await self.tools.stop()
            self.tools = None
