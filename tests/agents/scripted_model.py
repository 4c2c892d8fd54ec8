"""A loopback OpenAI Chat Completions stub that answers from a script, for a real agent's tool calls.

evalkit's simulated model calls a scenario's tools by the scenario's names; an MCP client such as Cline
offers them as `evalkit__<tool>`. This stub plays the calls by the names the test gives, then replies
in text, so a test can drive a real agent through evalkit's MCP server. Non-streamed answers only:
evalkit's `openai` backend entry (the front an agent talks to) asks for them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["scripted_model"]


def _answer(step: dict[str, Any] | str, index: int) -> dict[str, Any]:
    if isinstance(step, str):
        message: dict[str, Any] = {"role": "assistant", "content": step}
        finish = "stop"
    else:
        function = {"name": step["name"], "arguments": json.dumps(step["arguments"])}
        call = {"id": f"call_{index}", "type": "function", "function": function}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    return {
        "id": f"scripted-{index}",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@contextmanager
def scripted_model(script: list[dict[str, Any] | str]) -> Iterator[str]:
    """The stub's base URL (`http://127.0.0.1:PORT/v1`): answer i is script[i], the last one repeated."""
    served = [0]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                index = served[0]
                served[0] += 1
            body = json.dumps(_answer(script[min(index, len(script) - 1)], index)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
