"""Loopback OpenAI-compatible stub servers for tests that need real HTTP (several endpoints, Ray workers).

Each answers every chat completion with the recorded `text` payload and counts the requests it got.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.backends import payload

__all__ = ["chat_stubs"]


class _Chat(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(self.server.delay_s)  # type: ignore[attr-defined]
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.hits += 1  # type: ignore[attr-defined]
        body = json.dumps(payload("openai", "text")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def chat_stubs(count: int, delay_s: float = 0.0) -> Iterator[list[ThreadingHTTPServer]]:
    """`count` stub servers on free loopback ports, each answer after `delay_s`; `server.hits` counts
    the chat requests."""
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), _Chat) for _ in range(count)]
    for server in servers:
        server.hits = 0  # type: ignore[attr-defined]
        server.delay_s = delay_s  # type: ignore[attr-defined]
        server.lock = threading.Lock()  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
