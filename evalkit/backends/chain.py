"""A backend entry served by a chain of server phases: the model server, then e.g. a guard proxy.

    entry (concurrency k) ──► chain 0: [proxy] ──► pass-through 0 ──┐
                          ──► chain 1: [proxy] ──► pass-through 1 ──┼──► model server (once)
                          ──► …                                     ┘

The model server (the first phase) starts once. Every later phase starts once per chain, `k` chains
for an entry with `concurrency: k`, each in front of its own counting pass-through
(evalkit/backends/passthrough.py). A run holds one chain for all its calls and no other run uses it
meanwhile, so the chain's counter over the run is exactly what the model server served that run.

A phase that crashes mid-run is started again on its port (at most `MAX_RESTARTS` times per chain)
and the call is retried like any transient fault; a model server that dies, or a phase that cannot
come back, turns the calls into `infra_error` records naming the phase. Everything is stopped, every
phase's process tree included, when the entry is done, on Ctrl-C and on a failed start: all phases at
once, under one deadline. Their logs share one folder, removed at the end unless a phase failed (a
start that failed, a crash mid-run), when it is kept and named. What a phase's `env:` holds never
reaches an error text or the header (`PhaseProcess.secrets`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from evalkit.backends.base import Backend, Feature
from evalkit.backends.passthrough import CountingPassThrough, ServedCount
from evalkit.backends.phase_config import LlamaServerPhase, PhaseSettings, expand_env
from evalkit.backends.phase_packages import interpreter_of, package_versions
from evalkit.backends.phase_process import STOP_GRACE_S, PhaseProcess, venv_bin
from evalkit.backends.serve import LlamaServer, template_path
from evalkit.chat import CallContext, ChatRequest, Completion
from evalkit.errors import BackendError
from evalkit.results.records import PhaseRestart, RunRecord, Served
from evalkit.results.secrets import redact, redact_data

if TYPE_CHECKING:
    import httpx

    from evalkit.backends.entry import BackendEntry

__all__ = ["MAX_RESTARTS", "ChainBackend", "ServedChains"]

MAX_RESTARTS = 3  # a chain's phases started again after crashes, per entry


class _MetricsLlamaServer(LlamaServer):
    """llama-server with `--metrics` (its Prometheus counters: the reference for the served counts)."""

    def args(self) -> list[str]:
        return [*super().args(), "--metrics"]


def _llama_server(settings: LlamaServerPhase, model: str, base_dir: Path, log_dir: Path) -> LlamaServer:
    kind = _MetricsLlamaServer if settings.metrics else LlamaServer
    return kind(
        settings.model or model,
        template=template_path(settings.template, base_dir),
        parallel=settings.parallel,
        ctx_size=settings.ctx_size,
        seed=settings.seed,
        threads=settings.threads,
        startup_timeout_s=settings.startup_timeout_s,
        log_path=log_dir / "llama-server.log",  # with the other phases' logs
    )


@dataclass
class _Chain:
    """The phases after the model server, in front of one counting pass-through."""

    passthrough: CountingPassThrough
    phases: list[PhaseProcess] = field(default_factory=list)
    restarts: int = 0
    exits: list[PhaseRestart] = field(default_factory=list)  # each phase that exited, for the run holding it
    down: set[int] = field(default_factory=set)  # the phases (by id) that exited and are not running again

    @property
    def front(self) -> str:
        return self.phases[-1].url if self.phases else self.passthrough.url


class ServedChains:
    """The running model server and `k` chains in front of it; `start()` them, `stop()` them."""

    def __init__(self, entry: BackendEntry, base_dir: Path, config_file: str, chains: int):
        assert entry.serve is not None and entry.serve.phases is not None
        self.entry = entry
        self.settings = entry.serve.phases
        self.base_dir = base_dir
        self.config_file = config_file
        self.count = chains
        self.model: LlamaServer | PhaseProcess | None = None
        self.chains: list[_Chain] = []
        self._session: aiohttp.ClientSession | None = None
        self.log_dir = Path(tempfile.mkdtemp(prefix="evalkit-phase-logs-"))
        self.failed = False  # a phase failed to start or exited mid-run: its log is kept

    def _name(self, position: int, chain: int) -> str:
        name = self.settings[position].label(position)
        return f"{name}[{chain}]" if position and self.count > 1 else name

    @property
    def simulated(self) -> str | None:
        """The label the model server gave itself (`evalkit serve sim`), or None for a real model."""
        return self.model.simulated if isinstance(self.model, PhaseProcess) else None

    async def start(self) -> None:
        """Start the model server, then every chain (chains at once, phases in order). Raises
        `ServerUnavailable` (one line) after stopping whatever had started."""
        try:
            first = self.settings[0]
            if first.llama_server is not None:
                self.model = _llama_server(first.llama_server, self.entry.model, self.base_dir, self.log_dir)
                self.model.start()  # in this thread: the parent-death signal follows the starting thread
            else:
                self.model = self._process(0, 0, None)
                await self.model.start()
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
            limit = self.entry.max_response_bytes  # the pass-through bounds answers as a `url:` backend does
            self.chains = [_Chain(CountingPassThrough(self.model.url, self._session, limit)) for _ in range(self.count)]
            await _all_or_none([self._start_chain(i) for i in range(self.count)])
        except BaseException as exc:
            self.failed = not isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
            await self.stop()
            raise

    def _process(self, position: int, chain: int, upstream: str | None) -> PhaseProcess:
        return PhaseProcess(
            self.settings[position],
            self._name(position, chain),
            base_dir=self.base_dir,
            config_file=self.config_file,
            upstream=upstream,
            log_dir=self.log_dir,
        )

    def _processes(self) -> list[PhaseProcess]:
        model = [self.model] if isinstance(self.model, PhaseProcess) else []
        return [p for chain in self.chains for p in chain.phases] + model

    def secrets(self) -> list[str]:
        """The `env:` values of every phase: kept out of every error text and description."""
        return [s for p in self._processes() for s in p.secrets()]

    async def _start_chain(self, index: int) -> None:
        chain = self.chains[index]
        await chain.passthrough.start()
        upstream = chain.passthrough.url
        for position in range(1, len(self.settings)):
            process = self._process(position, index, upstream)
            chain.phases.append(process)
            await process.start()
            upstream = process.url

    async def stop(self) -> None:
        """Every phase of every chain and the model server asked to end at once, then waited for under
        one deadline (a phase that ignores SIGTERM costs one grace period, not one per chain)."""
        processes = self._processes()
        for process in processes:
            process.terminate()
        llama = self.model if isinstance(self.model, LlamaServer) else None
        stopping = asyncio.gather(*([asyncio.to_thread(llama.stop)] if llama is not None else []))
        deadline = time.monotonic() + STOP_GRACE_S + 5.0
        while any(p.running for p in processes) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        for process in processes:
            process.stop(timeout_s=0)  # what is left of it is killed
        await stopping
        for chain in self.chains:
            await chain.passthrough.stop()
        if self._session is not None:
            await self._session.close()
            self._session = None
        self._settle_logs()

    def _settle_logs(self) -> None:
        """Kept when a phase failed (every error about it named its log), removed otherwise."""
        if not self.failed:
            shutil.rmtree(self.log_dir, ignore_errors=True)

    async def recover(self, index: int, settle_s: float = 0.0) -> str | None:
        """After a failed call on chain `index`: None when every phase runs; else start the crashed
        phases again on their ports and say what happened (`BackendError`, not retryable, when the
        model server died or the chain cannot come back). `settle_s`: how long a dropped connection
        may take to show as a dead process."""
        deadline = time.monotonic() + settle_s
        while time.monotonic() < deadline and self._all_running(index):
            await asyncio.sleep(0.05)
        model = self.model
        if model is not None and not model.running:
            self.failed = True
            raise BackendError(f"the model server (server phase {self._name(0, 0)!r}) exited mid-run", retryable=False)
        chain = self.chains[index]
        dead = [p for p in chain.phases if not p.running]
        if not dead:
            return None
        self.failed = True
        what = dead[0].exited_text("mid-run", recorded=True)
        first = len(chain.exits)  # a phase left down is recorded once, by the run it stopped
        chain.exits += [
            PhaseRestart(phase=p.name, exit_code=p.exit_code, started=False) for p in dead if id(p) not in chain.down
        ]
        chain.down |= {id(p) for p in dead}
        if chain.restarts >= MAX_RESTARTS:
            raise BackendError(f"{what}; not started again after {MAX_RESTARTS} restarts", retryable=False)
        chain.restarts += 1
        for process in dead:
            process.stop()
            process.settings = process.settings.model_copy(update={"port": process.port})
            try:
                await process.start()
            except BackendError as exc:
                raise BackendError(f"{what}; starting it again failed: {exc}", retryable=False) from exc
            chain.down.discard(id(process))
        chain.exits[first:] = [e.model_copy(update={"started": True}) for e in chain.exits[first:]]
        return f"{what}; started it again"

    def _all_running(self, index: int) -> bool:
        model_up = self.model is None or self.model.running
        return model_up and all(p.running for p in self.chains[index].phases)

    async def provenance(self) -> dict[str, Any]:
        """What the header records: each phase's command, Python and packages; the chains; the counter."""
        phases = []
        for position, settings in enumerate(self.settings):
            if settings.llama_server is not None:
                assert isinstance(self.model, LlamaServer)
                phases.append({"name": self._name(0, 0), **await asyncio.to_thread(self.model.provenance)})
                continue
            process = self.model if position == 0 else self.chains[0].phases[position - 1]
            assert isinstance(process, PhaseProcess)
            packages = await asyncio.to_thread(self._packages, settings, process)
            # the venv as the config's variables chose it (relative to the config): a resume compares it
            venv = {"venv": expand_env(settings.venv, "venv")} if settings.venv else {}
            phases.append({**process.description(), "name": settings.label(position), **venv, **packages})
        return {
            "phases": phases,
            "chains": self.count,
            "served_counted_by": "evalkit's counting pass-through in front of the model server",
        }

    def _packages(self, settings: PhaseSettings, process: PhaseProcess) -> dict[str, Any]:
        bin_dir = venv_bin(settings, self.base_dir)
        fallback = str(bin_dir / "python") if bin_dir is not None else process.argv()[0]
        python, modules = interpreter_of(process.argv(), fallback)
        if not modules and not settings.packages:
            return {}
        return package_versions(python, modules, settings.packages)


async def _all_or_none(starts: list[Coroutine[Any, Any, None]]) -> None:
    """Run `starts` at once; when one fails, cancel the others before raising its error, so no chain
    goes on starting phases after the stop that follows (each phase's start stops it when cancelled)."""
    tasks = [asyncio.ensure_future(start) for start in starts]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class ChainBackend:
    """The entry's backend over its chains: a run's calls all go to the chain the run holds."""

    def __init__(self, entry: BackendEntry, served: ServedChains, fronts: list[Backend]):
        self.kind = entry.kind
        self.model = entry.model
        self.served = served
        self.fronts = fronts
        self._slots: dict[str, int] = {}

    @classmethod
    def build(
        cls, entry: BackendEntry, served: ServedChains, client: httpx.AsyncClient, create: Callable[..., Backend]
    ) -> ChainBackend:
        suffix = "/v1" if entry.kind == "openai" else ""  # an OpenAI base URL names its version
        fronts = [
            create(entry.model_copy(update={"url": c.front + suffix, "serve": None}), client) for c in served.chains
        ]
        return cls(entry, served, fronts)

    @property
    def simulated(self) -> bool:
        return self.served.simulated is not None or any(f.simulated for f in self.fronts)

    @property
    def capacity(self) -> int:
        """Runs in flight: one per chain."""
        return len(self.fronts)

    def supports(self, feature: Feature) -> bool:
        return self.fronts[0].supports(feature)

    async def describe(self) -> dict[str, Any]:
        try:
            described = await asyncio.gather(*(f.describe() for f in self.fronts))  # each learns its server
        except BackendError as exc:
            self._blank(exc)
            raise
        info: dict[str, Any] = redact_data(dict(described[0]), self.served.secrets())
        if self.served.simulated is not None:
            info.update(simulated=True, label=self.served.simulated)
        return info

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        try:
            return await self._complete(request, context)
        except BackendError as exc:
            self._blank(exc)
            raise

    def _blank(self, exc: BackendError) -> None:
        """`exc` with the phases' `env:` values blanked: a phase may echo one (a key) in an error,
        and the text is kept (a run record, the header)."""
        text = redact(str(exc), self.served.secrets())
        if text != str(exc):
            exc.args = (text,)

    async def _complete(self, request: ChatRequest, context: CallContext) -> Completion:
        index = self._slots.get(context.run_id, 0)
        try:
            return await self.fronts[index].complete(request, context)
        except BackendError as exc:
            if not exc.retryable:
                raise
            # a dropped connection (no HTTP status) may be a process that is dying: give it a moment
            recovered = await self.served.recover(index, settle_s=1.0 if exc.status is None else 0.0)
            if recovered is None:
                raise
            raise BackendError(recovered, retryable=True) from exc

    async def measured(self, index: int, run_id: str, run: Callable[[], Awaitable[RunRecord]]) -> RunRecord:
        """`run()` on chain `index`, its record with what the model server served it."""
        chain = self.served.chains[index]
        count = chain.passthrough.count
        before, exits_before = count.snapshot(), len(chain.exits)
        self._slots[run_id] = index
        try:
            record = await run()
        finally:
            del self._slots[run_id]
        # the run held the chain alone: every phase exit since it started happened during it
        restarts = chain.exits[exits_before:]
        return record.model_copy(update={"served": _served(count.minus(before)), "phase_restarts": restarts})

    async def aclose(self) -> None:
        for front in self.fronts:
            with contextlib.suppress(Exception):
                await front.aclose()


def _served(count: ServedCount) -> Served:
    return Served(
        calls=count.calls,
        errors=count.errors,
        prompt_tokens=count.prompt_tokens,
        completion_tokens=count.completion_tokens,
        latency_s=round(count.latency_s, 6),
    )
