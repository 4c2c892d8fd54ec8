"""Several servers of one model behind one backend entry (`urls:` or `endpoints:` in the config).

    backends:
      - label: smollm2
        kind: llama-server
        model: smollm2
        endpoints:
          - {url: "http://gpu-box:8080"}                  # concurrency: its /props total_slots
          - {url: "http://gpu-box:8081", concurrency: 2}

`PoolBackend` is a `Backend` wrapping one backend per server, so the runner and the loop see one
backend. Each call goes to a live server with a free slot: the one the run used last when it has
room (a llama-server keeps the run's prompt in that server's cache), else the least loaded (then the
one that has served least). A server is taken out of rotation for the rest of the run when it
refuses connections, or after `MAX_FAULTS` retryable faults in a row; the call then moves to
another server at once, without spending the run's retry budget. Only when every server is down
do the calls fail (and the runs end as `infra_error`, as with one server).

A server that refuses the credentials (HTTP 401 or 403) is not a transient fault: spreading the
calls over it would turn a share of the runs into `infra_error` while the run "succeeds". It raises
`BackendUnusable` naming the server, which stops the run (exit code 3, a backend unusable).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from evalkit.backends.base import Backend, Feature
from evalkit.chat import CallContext, ChatRequest, Completion
from evalkit.errors import BackendError, BackendUnusable
from evalkit.results.secrets import public_url

if TYPE_CHECKING:
    from evalkit.backends.settings import BackendSettings

__all__ = ["MAX_FAULTS", "Endpoint", "PoolBackend", "run_capacity"]

MAX_FAULTS = 3  # retryable faults in a row that take a server out of rotation
_AFFINITY = 4  # remembered runs per slot of capacity (bounded: memory must not grow with the runs)
_AUTH_REFUSED = frozenset({401, 403})


@dataclass
class Endpoint:
    url: str
    backend: Backend
    concurrency: int | None  # configured; None until describe() reads the server's slots
    in_flight: int = 0
    faults: int = 0
    calls: int = 0
    down: str | None = None  # why it left the rotation

    @property
    def capacity(self) -> int:
        return self.concurrency or 1


def _load(endpoint: Endpoint) -> tuple[float, float]:
    # busy slots first; among equally busy servers the one that has served least (round robin when idle)
    return endpoint.in_flight / endpoint.capacity, endpoint.calls / endpoint.capacity


def _refused(exc: BackendError) -> bool:
    # a refused connection is a server that is not there: out of rotation at once, not after MAX_FAULTS
    return isinstance(exc.__cause__, httpx.ConnectError)


class PoolBackend:
    """One backend entry served by several servers of the same kind and model."""

    def __init__(self, entry: BackendSettings, endpoints: list[Endpoint]):
        if not endpoints:
            raise ValueError("a pool needs at least one endpoint")
        self.kind = entry.kind
        self.model = entry.model
        self.endpoints = endpoints
        self._default_concurrency = entry.concurrency
        self._ready = asyncio.Condition()
        self._last: OrderedDict[str, Endpoint] = OrderedDict()

    @property
    def simulated(self) -> bool:  # read after describe(), which may learn it (`evalkit serve sim`)
        return all(e.backend.simulated for e in self.endpoints)

    @property
    def capacity(self) -> int:
        """Calls the live servers take at once: what the runner lets run in flight for this entry."""
        return sum(e.capacity for e in self.endpoints if e.down is None) or 1

    def supports(self, feature: Feature) -> bool:
        return all(e.backend.supports(feature) for e in self.endpoints)

    async def describe(self) -> dict[str, Any]:
        """Each server's own description under `endpoints` (all asked at once, as a server still
        loading its model makes describe wait); a server that cannot be described is down."""
        described = await asyncio.gather(*(self._describe_one(e) for e in self.endpoints))
        if all(e.down is not None for e in self.endpoints):
            raise BackendError(
                f"no endpoint of {self.model} is reachable: "
                + "; ".join(f"{public_url(e.url)}: {e.down}" for e in self.endpoints),
                retryable=True,
            )
        return {"kind": self.kind, "model": self.model, "simulated": self.simulated, "endpoints": described}

    async def _describe_one(self, endpoint: Endpoint) -> dict[str, Any]:
        try:
            info = await endpoint.backend.describe()
        except BackendError as exc:
            endpoint.down = f"describe failed: {exc}"
            info = {"error": str(exc)}
        if endpoint.concurrency is None:
            slots = info.get("total_slots")
            endpoint.concurrency = slots if isinstance(slots, int) and slots > 0 else self._default_concurrency
        return {
            **info,
            "url": public_url(endpoint.url),
            "concurrency": endpoint.concurrency,
            "up": endpoint.down is None,
        }

    async def _acquire(self, run_id: str, tried: set[int]) -> Endpoint:
        async with self._ready:
            while True:
                live = [e for i, e in enumerate(self.endpoints) if e.down is None and i not in tried]
                if not live:
                    down = "; ".join(f"{public_url(e.url)}: {e.down}" for e in self.endpoints if e.down)
                    raise BackendError(
                        f"every endpoint of {self.model} is down or failed this call ({down})",
                        retryable=any(e.down is None for e in self.endpoints),
                    )
                free = [e for e in live if e.in_flight < e.capacity]
                if free:
                    last = self._last.get(run_id)
                    # the run's previous server if it is free: its prompt cache already holds the conversation
                    chosen = last if last in free else min(free, key=_load)
                    chosen.in_flight += 1
                    return chosen
                await self._ready.wait()

    async def _release(self, endpoint: Endpoint, run_id: str) -> None:
        async with self._ready:
            endpoint.in_flight -= 1
            self._last[run_id] = endpoint
            self._last.move_to_end(run_id)
            while len(self._last) > _AFFINITY * self.capacity:
                self._last.popitem(last=False)
            # every waiter looks again: a freed slot or a server gone down changes what each can take
            self._ready.notify_all()

    def _fault(self, endpoint: Endpoint, exc: BackendError) -> None:
        endpoint.faults += 1
        if _refused(exc) or endpoint.faults >= MAX_FAULTS:
            endpoint.down = str(exc)

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        """Send the call to a live server; on a fault, to another one (each server once per call)."""
        tried: set[int] = set()
        while True:
            endpoint = await self._acquire(context.run_id, tried)
            try:
                completion = await endpoint.backend.complete(request, context)
            except BackendError as exc:
                if exc.status in _AUTH_REFUSED:
                    endpoint.down = f"authentication refused: {exc}"
                    raise BackendUnusable(
                        f"endpoint {public_url(endpoint.url)} of {self.model} refused the credentials "
                        f"(HTTP {exc.status}), which is not transient: the run stops; fix the key or remove "
                        f"that endpoint ({exc})",
                        status=exc.status,
                    ) from exc
                if not exc.retryable:
                    raise  # the request is wrong: every server would refuse it
                self._fault(endpoint, exc)
                tried.add(self.endpoints.index(endpoint))
                if len(tried) == len(self.endpoints):
                    raise  # every server failed this call: the run's retry policy backs off
                continue
            finally:
                await self._release(endpoint, context.run_id)
            # faults count in a row: one answer puts a flaky server back in good standing
            endpoint.faults = 0
            endpoint.calls += 1
            return completion

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.backend.aclose()


def run_capacity(backend: Backend, default: int) -> int:
    """Runs the runner keeps in flight for an entry: a pool's live capacity (or a served chain's
    number of chains), else the entry's concurrency."""
    inner = getattr(backend, "inner", backend)  # a RecordingBackend wraps the pool
    capacity = getattr(inner, "capacity", None)
    return capacity if isinstance(capacity, int) else default
