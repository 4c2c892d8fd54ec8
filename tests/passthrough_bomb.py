"""A child process for tests/backends/test_passthrough.py: a hostile model server behind the counting
pass-through, one request through it, and the process's peak memory over the request.

    python tests/passthrough_bomb.py MODE LIMIT_BYTES

MODE is `stream` (an endless `text/event-stream`), `gzip` (a JSON answer of about 200 KB gzip that
inflates to 200 MB) or `gzip-stream` (the same, as an event stream). Prints one JSON line: the bytes
the client got, their last 300 characters, the status, the pass-through's count and the growth of the
peak RSS (MB) over the request.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import zlib
from dataclasses import asdict

import aiohttp
from aiohttp import web

from evalkit.backends.passthrough import CountingPassThrough

INFLATED = 200 * 1024 * 1024


def _gzip_bomb(prefix: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    parts = [squeeze.compress(prefix)]
    block = b" " * (1 << 20)
    parts += [squeeze.compress(block) for _ in range(INFLATED >> 20)]
    return b"".join([*parts, squeeze.flush()])


async def _upstream(mode: str) -> web.AppRunner:
    bomb = (
        _gzip_bomb(b"data: " if mode == "gzip-stream" else b'{"usage": {"prompt_tokens": 1}, "x": "')
        if "gzip" in mode
        else b""
    )

    async def answer(request: web.Request) -> web.StreamResponse:
        if mode == "gzip":
            return web.Response(body=bomb, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
        headers = {"Content-Type": "text/event-stream"}
        if mode == "gzip-stream":
            return web.Response(body=bomb, headers={**headers, "Content-Encoding": "gzip"})
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        event = b"data: " + json.dumps({"choices": [{"delta": {"content": "x" * 60_000}}]}).encode() + b"\n\n"
        try:
            for _ in range(INFLATED // len(event)):
                await response.write(event)
        except ConnectionError:  # the pass-through cut it: what the test wants
            pass
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner


async def main(mode: str, limit: int) -> dict[str, object]:
    upstream = await _upstream(mode)
    async with aiohttp.ClientSession() as session:
        passthrough = CountingPassThrough(f"http://127.0.0.1:{upstream.addresses[0][1]}", session, limit)
        await passthrough.start()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        got, tail = 0, b""
        url = passthrough.url + "/v1/chat/completions"
        async with aiohttp.ClientSession() as client, client.post(url, json={"stream": True}) as answer:
            status = answer.status
            async for chunk in answer.content.iter_chunked(1 << 16):
                got += len(chunk)
                tail = (tail + chunk)[-300:]
        grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        await passthrough.stop()
    await upstream.cleanup()
    count = asdict(passthrough.count)
    return {"status": status, "got": got, "tail": tail.decode(errors="replace"), "count": count, "grown_mb": grown}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], int(sys.argv[2])))))
