"""A fast stub OpenAI-compatible server for benchmarks: it plays a scenario's reference calls.

Request k of a run (k = assistant messages already in the conversation) is answered with the
scenario's k-th reference call, and the one after the last with its reference reply, so a harness
runs the scenario's ideal path. Plain asyncio protocol with keep-alive and no JSON decoding of the
request, so that the stub costs far less per request than the client it measures;
`ceiling()` measures how many requests per second it serves to a minimal raw-socket client.

    python benchmarks/stub_server.py scenarios/sequential_reasoning/medication_chain.yaml   # prints its URL
    GET /stats -> {"requests": N}
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

_ASSISTANT = (b'"role":"assistant"', b'"role": "assistant"')


def _responses(scenario_path: Path) -> list[bytes]:
    from evalkit.scenario.model import load_scenario

    scenario = load_scenario(scenario_path)
    bodies: list[dict[str, Any]] = []
    for i, call in enumerate(scenario.reference.calls):
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
            ],
        }
        bodies.append({"message": message, "finish_reason": "tool_calls"})
    bodies.append(
        {"message": {"role": "assistant", "content": scenario.reference.reply or "Done."}, "finish_reason": "stop"}
    )
    out = []
    for choice in bodies:
        doc = {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "model": "stub",
            "choices": [{"index": 0, **choice}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }
        body = json.dumps(doc).encode()
        out.append(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
    return out


class _Stub(asyncio.Protocol):
    def __init__(self, responses: list[bytes], stats: dict[str, int]):
        self.responses, self.stats, self.buffer = responses, stats, b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            self._answer(head, body)

    def _answer(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        if head.startswith(b"GET /stats"):
            doc = json.dumps(self.stats).encode()
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(doc), doc)
            )
            return
        if head.startswith(b"GET "):  # /v1/models and the like: an empty listing
            doc = b'{"object": "list", "data": []}'
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(doc), doc)
            )
            return
        self.stats["requests"] += 1
        step = sum(body.count(marker) for marker in _ASSISTANT)
        self.transport.write(self.responses[min(step, len(self.responses) - 1)])


async def _serve(scenario_path: Path, port: int, ready: Any, lifetime_s: float) -> None:
    stats = {"requests": 0}
    responses = _responses(scenario_path)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Stub(responses, stats), "127.0.0.1", port)
    ready.put(server.sockets[0].getsockname()[1])
    await asyncio.sleep(lifetime_s)  # the stub stops by itself even if its parent never stops it
    server.close()


def _main(scenario_path: Path, port: int, ready: Any, lifetime_s: float) -> None:
    asyncio.run(_serve(scenario_path, port, ready, lifetime_s))


class StubServer:
    """The stub in its own process (so its CPU is not the harness's); `url` is the API base with /v1."""

    def __init__(self, scenario_path: Path, *, lifetime_s: float = 600.0):
        ctx = mp.get_context("spawn")
        self._ready = ctx.Queue()
        self._process = ctx.Process(target=_main, args=(scenario_path, 0, self._ready, lifetime_s), daemon=True)

    def __enter__(self) -> StubServer:
        self._process.start()
        self.port = int(self._ready.get(timeout=60))
        self.url = f"http://127.0.0.1:{self.port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.join(timeout=10)

    def requests(self) -> int:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=10) as response:
            count: int = json.loads(response.read())["requests"]
        return count

    def ceiling(self, *, requests: int = 4000, connections: int = 8) -> float:
        """Requests per second the stub serves to raw keep-alive sockets (no HTTP library)."""
        body = b'{"messages":[{"role":"user","content":"hi"}]}'
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: stub\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )

        async def client(n: int) -> None:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            for _ in range(n):
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
            writer.close()

        async def run() -> float:
            started = time.perf_counter()
            await asyncio.gather(*(client(requests // connections) for _ in range(connections)))
            return time.perf_counter() - started

        return (requests // connections * connections) / asyncio.run(run())


if __name__ == "__main__":
    with StubServer(Path(sys.argv[1])) as stub:
        print(stub.url, flush=True)
        print(f"ceiling: {stub.ceiling():.0f} requests/s", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
