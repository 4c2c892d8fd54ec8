"""A fault-injecting OpenAI-compatible server on loopback, for tests that need a real socket.

`httpx.MockTransport` cannot drip a body, reset a connection or hang a read; this server can. It
speaks enough of the OpenAI and llama-server dialects for both backend kinds (`/v1/chat/completions`,
`/v1/models`, `/health`, `/props`) and answers each chat request with one *kind*:

    ok          a plain final answer
    echo        a final answer that repeats the key (a 2xx body must still never store it)
    500 503 429 an error status (retryable)
    401         an error status (not retryable)
    redirect    302 to another URL (reported as a redirect, not followed)
    hang        accept the request and answer nothing until the server stops
    drip        a valid answer sent one byte at a time (a per-read timeout never fires)
    reset       close the connection with RST before answering
    truncated   a Content-Length longer than the body, then close
    garbage     200 with an HTML page
    empty       200 with `"choices": []`
    slow        a plain final answer after `drip_s` seconds, on a connection kept alive (not a fault:
                it holds requests in flight together, for connection-pool tests)

`faults` picks the kind of each chat request: a fixed list (request i gets `faults[i % len]`) or a
function of (seed sent in the body, how many requests that seed made before). Every chat request is
logged as `Hit(seed, index, kind)`. The server stops by itself after `lifetime_s` or `max_requests`.

    with FaultServer(["503", "ok"], key=KEY) as server:
        url = server.url          # http://127.0.0.1:PORT (append /v1 for kind: openai)
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

__all__ = ["KINDS", "RETRYABLE", "FaultServer", "Hit", "seeded_mix"]

KINDS = ("ok", "echo", "500", "503", "429", "401", "redirect", "hang", "drip", "reset", "truncated", "garbage", "empty")
EXTRA_KINDS = ("slow",)
RETRYABLE = frozenset({"500", "503", "429", "hang", "drip", "reset", "truncated"})

FaultPicker = Callable[[int | None, int], str]


class Hit(NamedTuple):
    seed: int | None
    index: int  # how many chat requests this seed made before this one
    kind: str


def seeded_mix(seed: int, weights: dict[str, float]) -> FaultPicker:
    """A picker that draws each (run seed, request index) from `weights`, the same way on every call."""
    import random

    kinds, cumulative = list(weights), list(weights.values())

    def pick(run_seed: int | None, index: int) -> str:
        return random.Random(f"{seed}:{run_seed}:{index}").choices(kinds, cumulative)[0]

    return pick


def _answer(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "model": "fault",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


_STATIC = {
    "/health": {"status": "ok"},
    "/props": {
        "chat_template_caps": {"supports_tools": True},
        "total_slots": 4,
        "build_info": "faultserver",
        "default_generation_settings": {"n_ctx": 4096, "params": {"temperature": 0.8}},
    },
    "/v1/models": {"object": "list", "data": [{"id": "fault", "object": "model", "owned_by": "tests"}]},
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stall

    def setup(self) -> None:
        super().setup()
        with self.server._lock:
            self.server.connections += 1

    def log_message(self, format: str, *args: Any) -> None:
        return None  # keep test output clean

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        extra: dict[str, str] | None = None,
        length: int | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, doc: Any) -> None:
        self._send(status, json.dumps(doc).encode())

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path in _STATIC:
            self._json(200, _STATIC[path])
        else:
            self._json(404, {"error": {"code": 404, "message": f"no route {path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self._json(404, {"error": {"code": 404, "message": "no route"}})
            return
        try:
            seed = json.loads(raw).get("seed")
        except (ValueError, AttributeError):
            seed = None
        kind = self.server.fault_for(seed if isinstance(seed, int) else None)
        getattr(self, "_" + kind if kind.isalpha() else "_status")(kind)

    # -- the kinds -------------------------------------------------------------------------------

    def _ok(self, kind: str) -> None:
        self._json(200, _answer("It is 21C and sunny in Paris."))

    def _slow(self, kind: str) -> None:
        self.server.stopping.wait(self.server.drip_s)
        self._ok(kind)

    def _echo(self, kind: str) -> None:
        self._json(200, _answer(f"Your key is {self.server.key}; it is 21C in Paris."))

    def _status(self, kind: str) -> None:
        status = int(kind)
        message = f"injected {status}" + (f" for key {self.server.key}" if status == 401 else "")
        self._json(status, {"error": {"code": status, "message": message}})

    def _redirect(self, kind: str) -> None:
        self._send(302, b"", extra={"Location": "http://127.0.0.1:9/elsewhere"})

    def _hang(self, kind: str) -> None:
        self.server.stopping.wait(self.server.lifetime_s)
        self.close_connection = True

    def _drip(self, kind: str) -> None:
        body = json.dumps(_answer("It is 21C and sunny in Paris, slowly.")).encode()
        self._send(200, b"", length=len(body))
        for byte in body:
            if self.server.stopping.wait(self.server.drip_s):
                break
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:  # the client gave up, as it should
                break
        self.close_connection = True

    def _reset(self, kind: str) -> None:
        # linger on with a zero timeout: close() sends RST instead of FIN
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _truncated(self, kind: str) -> None:
        body = json.dumps(_answer("cut off")).encode()
        self._send(200, body[: len(body) // 2], length=len(body))
        self.close_connection = True

    def _garbage(self, kind: str) -> None:
        self._send(200, b"<html><body>502 proxy says hello</body></html>", content_type="text/html")

    def _empty(self, kind: str) -> None:
        self._json(200, {"id": "chatcmpl-empty", "object": "chat.completion", "choices": []})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops a burst of connects (the client then waits 1 s to retry)

    def __init__(self, picker: FaultPicker, key: str, lifetime_s: float, drip_s: float, max_requests: int):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.picker, self.key, self.lifetime_s, self.drip_s = picker, key, lifetime_s, drip_s
        self.max_requests = max_requests
        self.stopping = threading.Event()
        self.hits: list[Hit] = []
        self.connections = 0  # TCP connections accepted
        self._lock = threading.Lock()
        self._per_seed: dict[int | None, int] = {}

    def fault_for(self, seed: int | None) -> str:
        with self._lock:
            index = self._per_seed.get(seed, 0)
            self._per_seed[seed] = index + 1
            kind = self.picker(seed, index) if len(self.hits) < self.max_requests else "503"
            self.hits.append(Hit(seed, index, kind))
        return kind


class FaultServer:
    """The server, run in a daemon thread; a context manager that starts and stops it."""

    def __init__(
        self,
        faults: Sequence[str] | FaultPicker,
        *,
        key: str = "",
        lifetime_s: float = 60.0,
        drip_s: float = 0.02,
        max_requests: int = 2000,
    ):
        if callable(faults):
            picker: FaultPicker = faults
        else:
            kinds = list(faults)
            unknown = set(kinds) - set(KINDS) - set(EXTRA_KINDS)
            if not kinds or unknown:
                raise ValueError(f"fault kinds must be among {KINDS}, got {sorted(unknown) or 'none'}")
            counter = iter(range(1 << 62))

            def picker(seed: int | None, index: int) -> str:
                return kinds[next(counter) % len(kinds)]

        self._server = _Server(picker, key, lifetime_s, drip_s, max_requests)
        self._thread = threading.Thread(target=self._serve, name="faultserver", daemon=True)
        self._deadline = time.monotonic() + lifetime_s

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def hits(self) -> list[Hit]:
        with self._server._lock:
            return list(self._server.hits)

    @property
    def connections(self) -> int:
        with self._server._lock:
            return self._server.connections

    def _serve(self) -> None:
        # a bounded loop: the server stops by itself at its deadline even if nobody calls stop()
        self._server.timeout = 0.05
        while not self._server.stopping.is_set() and time.monotonic() < self._deadline:
            self._server.handle_request()
        self._server.stopping.set()

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.stopping.set()
        self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
