"""Shared seams for the backend tests: a scripted HTTP server behind `httpx.MockTransport`, payload fixtures.

Every real backend takes its `httpx.AsyncClient` as a constructor argument, so the tests build one on a
`MockTransport` whose handler is a `MockServer`: routes (`"POST /v1/chat/completions"`) answer from a
script, and every request is kept for assertions. Nothing here touches the network or the real clock.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import httpx

from evalkit.backends.entry import BackendEntry
from evalkit.backends.settings import RetrySettings
from evalkit.chat import CallContext, ChatRequest, Message, Sampling, ToolSpec
from evalkit.scenario.model import Scenario
from tests.integration.wire import GET_WEATHER, RESPOND, TOOLS

__all__ = [
    "CONTEXT",
    "GET_WEATHER",
    "RESPOND",
    "TOOLS",
    "WEATHER",
    "WEATHER_DOC",
    "MockServer",
    "Step",
    "arun",
    "entry",
    "json_body",
    "payload",
    "request",
]

DATA = Path(__file__).resolve().parent.parent / "data" / "backends"
CONTEXT = CallContext(run_id="r/0", seed=1, call_index=0)
NO_WAIT = RetrySettings(attempts=3, base_delay_s=0, max_delay_s=0)

T = TypeVar("T")

# one tool, one call to make, then an answer: what the loop-level tests run against a scripted server
WEATHER_DOC: dict[str, Any] = {
    "id": "weather-paris",
    "family": "sequential_reasoning",
    "system": "You are a weather assistant.",
    "turns": ["What is the weather in Paris?"],
    "max_iterations": 5,
    "tools": [
        {
            "name": GET_WEATHER.name,
            "description": GET_WEATHER.description,
            "parameters": GET_WEATHER.parameters,
            "results": [{"when": {"city": "Paris"}, "returns": {"temp_c": 21, "sky": "sunny"}}],
        }
    ],
    "reference": {"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "reply": "21C, sunny."},
    "check": {
        "calls": {"required": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        "reply": {"contains": ["21"]},
    },
}
WEATHER = Scenario.model_validate(WEATHER_DOC)

# what a route answers with, one item per request (the last item repeats):
#   (status, body)      a JSON body (dict/list), or a str sent verbatim as text/html
#   an exception class  raised as the transport would (httpx.ConnectTimeout, httpx.ConnectError, ...)
#   a callable          request -> httpx.Response, for anything else
Step = tuple[int, Any] | type[httpx.RequestError] | Callable[[httpx.Request], httpx.Response]


def payload(backend: str, name: str) -> Any:
    """A recorded wire payload from tests/data/backends/<backend>.json (a fresh copy each time)."""
    doc = json.loads((DATA / f"{backend}.json").read_text(encoding="utf-8"))
    return copy.deepcopy(doc[name])


class MockServer:
    """A scripted HTTP server: `routes` maps "METHOD /path" to the steps it answers with, in order."""

    def __init__(self, routes: dict[str, list[Step]]):
        self.routes = {key: list(steps) for key, steps in routes.items()}
        self.requests: list[httpx.Request] = []

    def handle(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        key = f"{req.method} {req.url.path}"
        steps = self.routes.get(key)
        if not steps:
            return httpx.Response(404, json={"error": f"no route {key}"})
        step = steps.pop(0) if len(steps) > 1 else steps[0]
        if isinstance(step, tuple):
            status, body = step
            if isinstance(body, str):
                return httpx.Response(status, text=body, headers={"content-type": "text/html"})
            return httpx.Response(status, json=body)
        if isinstance(step, type):
            raise step(f"simulated {step.__name__}", request=req)
        return step(req)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def hits(self, route: str) -> list[httpx.Request]:
        method, path = route.split(" ", 1)
        return [r for r in self.requests if r.method == method and r.url.path == path]

    def sent(self, route: str, index: int = -1) -> dict[str, Any]:
        """The JSON body of one request sent to `route` (the last by default)."""
        body: dict[str, Any] = json.loads(self.hits(route)[index].content)
        return body


def json_body(req: httpx.Request) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(req.content)
    return body


def entry(kind: str, *, model: str = "m", url: str | None = None, **extra: Any) -> BackendEntry:
    """A config entry with zero-delay retries (a retry never waits on the real clock)."""
    extra.setdefault("retry", NO_WAIT)
    return BackendEntry(label=f"test-{kind}", kind=kind, model=model, url=url, **extra)


def request(*messages: Message, tools: list[ToolSpec] | None = None, **fields: Any) -> ChatRequest:
    """A request; by default one user question, the two wire tools, and seeded greedy sampling."""
    msgs = list(messages) or [Message(role="user", content="What is the weather in Paris?")]
    fields.setdefault("sampling", Sampling(temperature=0.0, seed=42, max_tokens=64))
    return ChatRequest(messages=msgs, tools=TOOLS if tools is None else tools, **fields)


def arun(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)
