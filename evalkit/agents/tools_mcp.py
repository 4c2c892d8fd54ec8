"""The scenario's tools over MCP: one streamable-HTTP server, one path per run (`/run/<token>/mcp`).

Each run registers its `RunTools`: the scenario's mocked tools with their schemas as the loop offers
them on the first turn, the run's own stateful mock instances, and the list of every call the server
saw. A call runs exactly as in evalkit's own loop (`evalkit.scenario.mocks.execute_call`, the same
stateful mocks), and its result is the text the loop puts in the tool message (`result_text`),
never flagged `isError`: a mocked tool's error is the tool's answer, as in the loop, so an agent
that retries on MCP errors is not given a retry the loop would not give (docs/agents.md). The low-level
`mcp.server.lowlevel.Server` is used rather than `MCPServer` because the scenario's JSON schemas are
served as written, not derived from Python signatures, and no schema validation runs before the mock:
what the model asked for is what the mock sees.

The server runs stateless (a transport per request, JSON answers) under uvicorn on a loopback port,
in a task of its own, without uvicorn's signal handlers: evalkit's runner owns SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from evalkit.backends._wire import tool_call
from evalkit.backends.run_url import split_run_path
from evalkit.chat import ExecutedCall
from evalkit.errors import MissingExtra
from evalkit.scenario.mocks import execute_call, result_text
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks

__all__ = ["McpToolServer", "RunTools"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_INSTALL = "pip install 'evalkit[agents]'"


class RunTools:
    """One run's tools: the scenario's mocks (a fresh set of stateful instances) and the calls seen."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.mocks = StatefulMocks(scenario) if scenario.state else None
        self.executed: list[ExecutedCall] = []

    def specs(self) -> list[dict[str, Any]]:
        """name, description and input schema of each tool offered on the first turn."""
        return [
            {"name": s.name, "description": s.description, "inputSchema": s.parameters}
            for s in (t.spec() for t in self.scenario.tools_at(0))
        ]

    def call(self, name: str, arguments: object) -> str:
        """Run one call as the loop does; the result text the loop would send back."""
        done = execute_call(self.scenario, tool_call(f"mcp_{len(self.executed)}", name, arguments or {}), self.mocks)
        self.executed.append(done)
        return result_text(done)


def _server(runs: dict[str, RunTools]) -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    def tools_of(ctx: Any) -> RunTools:
        token, _ = split_run_path(ctx.request.url.path if ctx.request is not None else "")
        found = runs.get(token or "")
        if found is None:
            raise ValueError("no run of evalkit's is served at this path")
        return found

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(s) for s in tools_of(ctx).specs()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        text = tools_of(ctx).call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=False)

    return Server("evalkit", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


class McpToolServer:
    """The MCP endpoint of every run of a phase; `open_run` registers one run's tools at its path."""

    def __init__(self) -> None:
        try:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        except ImportError as exc:
            raise MissingExtra(f"agents need the MCP server: {_INSTALL}") from exc
        self.runs: dict[str, RunTools] = {}
        self._manager = StreamableHTTPSessionManager(_server(self.runs), json_response=True, stateless=True)
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self._task: asyncio.Task[None] | None = None
        self._uvicorn: Any = None

    def url(self, token: str) -> str:
        return f"http://127.0.0.1:{self.port}/run/{token}/mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            token, rest = split_run_path(scope.get("path", ""))
            if token not in self.runs or rest.rstrip("/") != "/mcp":
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b"no such run"})
                return
            await self._manager.handle_request(scope, receive, send)

    async def start(self) -> None:
        import uvicorn

        class _Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield  # the runner handles SIGINT and SIGTERM

        config = uvicorn.Config(self, log_level="warning", lifespan="off", access_log=False)
        self._uvicorn = _Quiet(config)
        started = asyncio.Event()

        async def serve() -> None:
            async with self._manager.run():
                started.set()
                await self._uvicorn.serve(sockets=[self._socket])

        self._task = asyncio.ensure_future(serve())
        await started.wait()
        while not self._uvicorn.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()  # raises what stopped it

    async def stop(self) -> None:
        if self._task is not None:
            self._uvicorn.should_exit = True
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, timeout=5)
            self._task = None
        self._socket.close()

    @contextlib.asynccontextmanager
    async def open_run(self, token: str, scenario: Scenario) -> AsyncIterator[RunTools]:
        tools = self.runs[token] = RunTools(scenario)
        try:
            yield tools
        finally:
            del self.runs[token]
