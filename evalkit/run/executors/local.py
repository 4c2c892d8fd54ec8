"""The default executor: a phase's runs in this process.

Each backend entry gets as many workers as it takes runs at once (its `concurrency`, or a pool's
live slots), all pulling from that entry's lazy plan, so memory holds the runs in flight and not the
matrix. Records go through a bounded queue to the driver, which writes them. Workers yield to the
event loop after every run, even on the simulated backend (which never waits), so a signal stops the
run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from evalkit.backends import create_backend, http_client, needs_http_client
from evalkit.backends.base import Backend
from evalkit.backends.entry import BackendEntry
from evalkit.backends.pool import run_capacity
from evalkit.backends.serve import LlamaServer, server_for
from evalkit.errors import BackendError
from evalkit.results.records import RunRecord
from evalkit.run.config import RunConfig
from evalkit.run.matrix import PlannedRun, execute_run, scenario_hash

if TYPE_CHECKING:
    from evalkit.agents.phase import AgentPhase
    from evalkit.backends.chain import ChainBackend

__all__ = ["LocalExecutor", "LocalPhase", "OpenBackends"]

_DONE = object()


async def _describe(backend: Backend) -> dict[str, Any]:
    try:
        return await backend.describe()
    except BackendError as exc:  # the runs will record the outage; the header says why
        return {"kind": backend.kind, "model": backend.model, "error": str(exc)}


class OpenBackends:
    """One backend per config entry (and an httpx client where it speaks HTTP), optionally recording
    every call. An entry with `serve:` gets its own llama-server(s), or with `serve.phases` its chains
    of server phases (`evalkit.backends.chain`), started here, stopped by `aclose`."""

    def __init__(self) -> None:
        self.clients: dict[str, httpx.AsyncClient] = {}
        self.backends: dict[str, Backend] = {}
        self.servers: dict[str, list[LlamaServer]] = {}
        self.chains: dict[str, ChainBackend] = {}
        self.agents: AgentPhase | None = None  # the agents under test, when the config has any

    @classmethod
    async def open(cls, config: RunConfig, entries: list[BackendEntry], record_dir: Path | None) -> OpenBackends:
        pool = cls()
        try:
            for entry in entries:
                if entry.serve is not None and entry.serve.phases is None:
                    entry = pool._serve(config, entry)
                client = None
                if needs_http_client(entry.kind):  # the simulated and replay backends never use one
                    client = pool.clients[entry.label] = http_client(entry)
                backend: Backend
                if entry.serve is not None and entry.serve.phases is not None:
                    assert client is not None  # BackendEntry refuses phases for sim and replay
                    backend = await pool._chains(config, entry, client)
                else:
                    backend = create_backend(entry, client)
                # the recorder wraps the outermost backend: it records what the run saw, chain or not
                if record_dir is not None:
                    from evalkit.backends.recording import RecordingBackend

                    backend = RecordingBackend(backend, record_dir / entry.label)
                pool.backends[entry.label] = backend
            if config.agents:
                await pool._agents(config, entries)
        # a failure half way (a server that did not start) must not leave the started ones running
        except BaseException:
            await pool.aclose()
            raise
        return pool

    def _serve(self, config: RunConfig, entry: BackendEntry) -> BackendEntry:
        assert entry.serve is not None
        servers = [
            server_for(entry.serve, entry.model, Path(config.base_dir or ".")) for _ in range(entry.serve.replicas)
        ]
        self.servers[entry.label] = servers
        for server in servers:
            # in this thread, not a worker: the server's parent-death signal follows the thread
            # that started it; nothing else runs while a served phase starts
            server.start()
        urls = [server.url for server in servers]  # several: one pool (backends/pool.py)
        return entry.model_copy(update={"url": urls[0]} if len(urls) == 1 else {"urls": urls})

    async def _chains(self, config: RunConfig, entry: BackendEntry, client: httpx.AsyncClient) -> ChainBackend:
        from evalkit.backends.chain import ChainBackend, ServedChains  # aiohttp: served chains only

        base_dir = Path(config.base_dir or ".")
        config_file = str(Path(config.source).resolve()) if config.source else ""
        served = ServedChains(entry, base_dir, config_file, chains=entry.concurrency)
        await served.start()  # in this thread, as `_serve`: the parent-death signal follows it
        chain = self.chains[entry.label] = ChainBackend.build(entry, served, client, create_backend)
        return chain

    async def _agents(self, config: RunConfig, entries: list[BackendEntry]) -> None:
        from evalkit.agents.phase import AgentPhase  # aiohttp, mcp: agent runs only
        from evalkit.run.preflight import config_scenarios

        models = {e.label: e.model for e in entries}
        base_dir = Path(config.base_dir or ".")
        self.agents = await AgentPhase.open(config.agents, base_dir, self.backends, models, config_scenarios(config))

    async def describe(self) -> dict[str, dict[str, Any]]:
        provenance = {label: await _describe(b) for label, b in self.backends.items()}
        for label, chain in self.chains.items():
            provenance[label]["started_by_evalkit"] = await chain.served.provenance()
        for label, servers in self.servers.items():
            started = [await asyncio.to_thread(server.provenance) for server in servers]
            provenance[label]["started_by_evalkit"] = started[0] if len(started) == 1 else started
        return provenance

    # the order they were opened in, reversed: agents call backends, backends use clients and servers
    async def aclose(self) -> None:
        if self.agents is not None:
            await self.agents.aclose()
        for backend in self.backends.values():
            await backend.aclose()
        for client in self.clients.values():
            await client.aclose()
        for servers in self.servers.values():
            for server in servers:
                await asyncio.to_thread(server.stop)
        for chain in self.chains.values():
            await chain.served.stop()


class LocalPhase:
    """A phase's runs in this process: one set of workers per entry, bounded by its capacity."""

    def __init__(self, config: RunConfig, entries: list[BackendEntry], pool: OpenBackends):
        self.config = config
        self.entries = entries
        self.pool = pool

    @property
    def simulated(self) -> bool:  # after describe(): an HTTP backend may learn it is `evalkit serve sim`
        return any(b.simulated for b in self.pool.backends.values())

    async def describe(self) -> dict[str, dict[str, Any]]:
        return await self.pool.describe()

    def capacity(self) -> dict[str, int]:
        """Runs in flight per entry (known once described: a pool counts its servers' slots)."""
        return {e.label: run_capacity(self.pool.backends[e.label], e.concurrency) for e in self.entries}

    async def _agent_run(self, spec: PlannedRun, backend: Backend) -> RunRecord:
        from evalkit.agents.execute import AgentSpec

        assert spec.agent is not None and self.pool.agents is not None
        facts = AgentSpec(
            spec.run_id,
            spec.cell,
            spec.index,
            spec.seed,
            spec.scenario,
            spec.entry.label,
            spec.scenario_hash or scenario_hash(spec.scenario),
        )
        return await self.pool.agents.run(facts, spec.agent, spec.entry.model, backend.simulated)

    async def run(self, pending: Mapping[str, Iterator[PlannedRun]]) -> AsyncGenerator[RunRecord, None]:
        """Each run's record as soon as it finishes; closing the generator cancels the runs in flight."""
        capacity = self.capacity()
        # bounded by the runs in flight: a writer that falls behind holds the workers back, not memory
        queue: asyncio.Queue[object] = asyncio.Queue(maxsize=max(1, sum(capacity.values())))

        async def work(specs: Iterator[PlannedRun], backend: Backend, chain: ChainBackend | None, slot: int) -> None:
            for spec in specs:  # shared by the entry's workers: each run is taken once
                run = functools.partial(execute_run, spec, backend, self.config)
                if spec.agent is not None:
                    run = functools.partial(self._agent_run, spec, backend)
                # a served chain per worker: the run's served calls are that chain's count over the run
                await queue.put(await (chain.measured(slot, spec.run_id, run) if chain else run()))
                await asyncio.sleep(0)  # a simulated run never waits: let signals and other workers in

        workers = [
            asyncio.ensure_future(work(specs, self.pool.backends[label], self.pool.chains.get(label), slot))
            for label, specs in pending.items()
            for slot in range(max(1, capacity.get(label, 1)))
        ]

        async def finish() -> None:
            try:
                await asyncio.gather(*workers)
            except Exception as exc:  # a bug in a run ends the phase, as it would a plain loop
                await queue.put(exc)
            else:
                await queue.put(_DONE)

        # the finisher tells the loop below when every worker is done (or one failed)
        finisher = asyncio.ensure_future(finish())
        try:
            while (item := await queue.get()) is not _DONE:
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, RunRecord)
                yield item
        finally:
            # the generator closed early (a signal, a write that failed): no run may go on unwritten
            for task in [*workers, finisher]:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*workers, finisher, return_exceptions=True)


class LocalExecutor:
    """Runs every phase in this process (the default; `evalkit.run.executors` lists the others)."""

    @contextlib.asynccontextmanager
    async def phase(
        self, config: RunConfig, entries: list[BackendEntry], record_dir: Path | None
    ) -> AsyncIterator[LocalPhase]:
        pool = await OpenBackends.open(config, entries, record_dir)
        try:
            yield LocalPhase(config, entries, pool)
        finally:
            await pool.aclose()
