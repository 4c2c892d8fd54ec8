"""`evalkit serve sim`'s application on a loopback port in a background thread, for tests in this process."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from aiohttp import web

from evalkit.backends.sim_server import SimServer

__all__ = ["sim_http"]


@contextmanager
def sim_http(server: SimServer) -> Iterator[str]:
    """The server's root URL (`http://127.0.0.1:PORT`) while the block runs."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(server.app(), access_log=None)
    started = threading.Event()
    stop = asyncio.Event()
    port: list[int] = []

    async def serve() -> None:
        await runner.setup()
        listening = await server.gate.listen(runner, "127.0.0.1", 0)  # as `evalkit serve sim` listens
        port.append(listening.sockets[0].getsockname()[1])
        started.set()
        await stop.wait()
        listening.close()
        await runner.cleanup()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{port[0]}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()
