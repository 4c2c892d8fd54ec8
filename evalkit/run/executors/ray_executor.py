"""`--executor ray`: the pending runs pulled in batches by Ray workers, records streamed back to the driver.

Each worker is a Ray actor that opens the phase's backends where it runs (so a config URL such as
`http://127.0.0.1:8080` reaches the model server of that worker's node) and runs batches of runs
with the same code as a local run. Records come back as JSON lines through a Ray generator, and
the driver validates and writes them: it alone holds the results file, so resume, the lock and
the integrity checks work as for a local run. The runs' seeds come from the plan, not from the
worker, so a Ray run's records equal a local run's.

Workers need evalkit (and its extras) importable: the same environment on every node, or a Ray
`runtime_env`. `--record` stays local: a recording directory would be split across the nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import BackendError, ConfigError, EvalkitError
from evalkit.results.records import RunRecord

if TYPE_CHECKING:
    from evalkit.backends.entry import BackendEntry
    from evalkit.run.config import RunConfig
    from evalkit.run.executors.local import LocalPhase
    from evalkit.run.matrix import PlannedRun

__all__ = ["RayExecutor", "ShardWorker"]

_DONE = object()


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("--executor ray needs Ray: pip install 'evalkit[ray]'") from exc
    return ray


def _worker_error(exc: Exception) -> Exception:
    """evalkit's own errors keep their type (and exit code; Ray re-raises them as their cause's class);
    a worker that died or could not import evalkit is a backend that could not be used."""
    if isinstance(exc, EvalkitError):
        return exc
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return BackendError(f"a Ray worker failed: {first}")


class ShardWorker:
    """The body of a Ray actor: one local phase on the worker's node."""

    def __init__(self, config: RunConfig, entries: list[BackendEntry]):
        self.config = config
        self.entries = entries
        self._stack = contextlib.AsyncExitStack()
        self._phase: LocalPhase | None = None

    async def open(self) -> tuple[bool, int, dict[str, Any]]:
        """Open and describe the backends: (simulated, runs this worker takes at once, provenance)."""
        from evalkit.run.executors.local import LocalExecutor

        self._phase = await self._stack.enter_async_context(LocalExecutor().phase(self.config, self.entries, None))
        described = {"node": socket.gethostname(), "backends": await self._phase.describe()}
        return self._phase.simulated, sum(self._phase.capacity().values()), described

    async def run(self, pending: list[PlannedRun]) -> AsyncGenerator[str, None]:
        assert self._phase is not None, "open() first"
        by_label: dict[str, list[PlannedRun]] = {}
        for spec in pending:
            by_label.setdefault(spec.entry.label, []).append(spec)
        async with contextlib.aclosing(self._phase.run({k: iter(v) for k, v in by_label.items()})) as records:
            async for record in records:
                # JSON across the wire: the driver validates it into a record of its own evalkit's model
                yield record.model_dump_json()

    async def close(self) -> None:
        await self._stack.aclose()


def _provenance(described: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each label's description from the first worker, and every worker's own under `ray_workers`."""
    # the first worker's description stands for the label; every worker's is kept beside it, so a
    # node with another server build shows in the header
    first = described[0]["backends"]
    return {
        label: {**info, "ray_workers": [{"node": d["node"], **d["backends"].get(label, {})} for d in described]}
        for label, info in first.items()
    }


class RayPhase:
    """Workers pull batches of the pending runs as they free up, so a faster node takes more of them
    and the driver never holds more than the batches in flight."""

    def __init__(
        self, actors: list[Any], capacities: list[int], simulated: bool, provenance: dict[str, dict[str, Any]]
    ):
        self.actors = actors
        self.capacities = capacities
        self.simulated = simulated
        self._provenance = provenance

    async def describe(self) -> dict[str, dict[str, Any]]:
        return self._provenance

    async def run(self, pending: Mapping[str, Iterator[PlannedRun]]) -> AsyncGenerator[RunRecord, None]:
        """Records of every worker's batches, in the order they finish."""
        queue: asyncio.Queue[object] = asyncio.Queue()
        source = _round_robin(pending.values())

        async def pump(actor: Any, batch_size: int) -> None:
            try:
                while batch := list(itertools.islice(source, batch_size)):
                    async for ref in actor.run.remote(batch):
                        await queue.put(await ref)
            except Exception as exc:  # a worker's failure ends the phase, as a local one would
                await queue.put(_worker_error(exc))
            finally:
                # every pump says it is done, failed or not: the loop below counts them down
                await queue.put(_DONE)

        # two batches in flight per worker (they share its limits): it never idles at a batch's tail
        pumps = [
            asyncio.ensure_future(pump(actor, max(1, capacity)))
            for actor, capacity in zip(self.actors, self.capacities, strict=True)
            for _ in range(2)
        ]
        remaining = len(pumps)
        try:
            while remaining:
                item = await queue.get()
                if item is _DONE:
                    remaining -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    yield RunRecord.model_validate_json(str(item))
        finally:
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)


def _round_robin(plans: Iterable[Iterator[PlannedRun]]) -> Iterator[PlannedRun]:
    """One run of each backend's plan in turn, so every backend gets work from the first batch."""
    live = list(plans)
    while live:
        for plan in list(live):
            spec = next(plan, None)
            if spec is None:
                live.remove(plan)
            else:
                yield spec


class RayExecutor:
    """Ray workers (default: one per alive node) at `address` (default: a local Ray, or RAY_ADDRESS)."""

    def __init__(self, *, address: str | None = None, workers: int | None = None):
        if workers is not None and workers < 1:
            raise ConfigError(f"--workers {workers}: must be at least 1")
        self.address = address
        self.workers = workers

    def _worker_count(self, ray: Any) -> int:
        return self.workers or max(1, sum(1 for node in ray.nodes() if node.get("Alive")))

    @contextlib.asynccontextmanager
    async def phase(
        self, config: RunConfig, entries: list[BackendEntry], record_dir: Path | None
    ) -> AsyncIterator[RayPhase]:
        if record_dir is not None:
            raise ConfigError("--record works with the local executor only (recordings would be spread over nodes)")
        if config.agents:  # their processes, model URLs and MCP server live in the driver's process
            raise ConfigError(f"agents.{next(iter(config.agents))}: agents run with the local executor only")
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=self.address)
        worker = ray.remote(num_cpus=0)(ShardWorker)
        actors = [
            worker.options(scheduling_strategy="SPREAD").remote(config, entries) for _ in range(self._worker_count(ray))
        ]
        try:
            try:
                opened = await asyncio.gather(*(actor.open.remote() for actor in actors))
            except Exception as exc:
                raise _worker_error(exc) from exc
            yield RayPhase(
                actors,
                [capacity for _, capacity, _ in opened],
                any(flag for flag, _, _ in opened),
                _provenance([info for _, _, info in opened]),
            )
        finally:
            with contextlib.suppress(Exception):  # a dead worker must not hide the phase's own error
                await asyncio.gather(*(actor.close.remote() for actor in actors))
            for actor in actors:
                ray.kill(actor)
