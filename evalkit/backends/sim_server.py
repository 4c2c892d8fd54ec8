"""`evalkit serve sim`: the simulated backend served over HTTP, as OpenAI's and Anthropic's APIs.

    GET  /health               {"status": "ok", "simulated": true, "label": "SIMULATED", "profile": {...}}
    GET  /v1/models            the profile as the one model (`"simulated": true` on it)
    GET  /props                llama-server's description, enough for `kind: llama-server` and guard proxies
    POST /v1/chat/completions  OpenAI's chat completions (tools, tool_choice, response_format, grammar)
    POST /v1/messages          Anthropic's Messages API (tools, tool_choice)

Each request is answered by `SimulatedBackend.complete` with the call context that
`evalkit.backends.sim_wire` reads from the conversation, so an external harness or a guard proxy in
front of it meets the same simulated model as evalkit's runs in process, offline and fast. Every
answer carries the header `X-Evalkit-Simulated` (the profile's label), and `/health`, `/v1/models` and
`/props` say `"simulated": true`, so whatever reads results through it can label them SIMULATED.

Every path also answers under a run's prefix, `/run/<token>/v1/...` (evalkit/backends/run_url.py): the
token names the scenario, seed and run id, taken as if the request carried evalkit's headers, so an
agent that sends no seed is seeded per run. An observer (`ServedCalls`; evalkit's agent runner) counts
each run's served calls, numbers them, and may refuse a call past the run's budget.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol

from aiohttp import web

from evalkit.backends.base import Backend
from evalkit.backends.entry import BackendEntry
from evalkit.backends.run_url import RunToken
from evalkit.backends.sim import SimulatedBackend
from evalkit.backends.sim_limits import ConnectionGate, RequestError, ServeLimits, json_errors, log, read_json
from evalkit.backends.sim_schema import validate_anthropic, validate_openai
from evalkit.backends.sim_stream import anthropic_events, honoured, openai_events, send_events
from evalkit.backends.sim_wire import KnownScenario, ScenarioIndex, SimCall, anthropic_call, openai_call
from evalkit.chat import CallContext, Completion, ToolCall
from evalkit.errors import BackendError, ReplayMiss

__all__ = ["SIMULATED_HEADER", "ServedCalls", "SimServer"]

SIMULATED_HEADER = "X-Evalkit-Simulated"
SCENARIO_HEADER = "X-Evalkit-Scenario"
_STOP_REASON = {"tool_calls": "tool_use", "length": "max_tokens"}
UNKNOWN_OPENINGS_KEPT = 1024  # digests of the unknown openings already warned about (32 bytes each)
Reader = Callable[[dict[str, Any], dict[str, str], ScenarioIndex], SimCall]
Validator = Callable[[object, dict[str, str]], None]
Events = Callable[[dict[str, Any], dict[str, Any]], Iterable[bytes]]


class ServedCalls(Protocol):
    """Who watches the calls served under run URLs."""

    def admit(self, run: RunToken, context: CallContext) -> CallContext | str:
        """The context the call is answered in (its index in its run, the run's placeholders), or why
        it is refused (the run is past its budget, or unknown)."""
        ...

    def served(self, run: RunToken, call: SimCall, completion: Completion) -> None: ...

    def missed(self, run: RunToken, miss: ReplayMiss) -> None:
        """The backend has no recorded answer for the run's call: the run cannot go on."""
        ...

    def finished(self, run: RunToken) -> None:
        """An admitted call is over, answered or not (a stuck run can then tell whether it waited on the model)."""
        ...


def _arguments(call: ToolCall) -> str:
    # a malformed call goes out as the model wrote it, as an OpenAI-compatible server sends it
    return call.raw_arguments or "" if call.arguments is None else json.dumps(call.arguments)


def openai_reply(completion: Completion, model: str, call_id: str, created: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": completion.text or None}
    if completion.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c)}}
            for c in completion.tool_calls
        ]
    usage = completion.usage
    return {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": "evalkit-sim",
        "choices": [{"index": 0, "message": message, "finish_reason": completion.finish_reason}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        },
    }


def anthropic_reply(completion: Completion, model: str, call_id: str, created: int = 0) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": completion.text}] if completion.text else []
    # `input` must be an object in this protocol: a call whose arguments never parsed goes out empty
    content += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}} for c in completion.tool_calls
    ]
    return {
        "id": f"msg_{call_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _STOP_REASON.get(completion.finish_reason, "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": completion.usage.prompt_tokens, "output_tokens": completion.usage.completion_tokens},
    }


class SimServer:
    """The aiohttp application around one simulated profile and the scenarios it knows."""

    def __init__(
        self,
        profile: str,
        scenarios: Sequence[KnownScenario] = (),
        *,
        backend: Backend | None = None,
        observer: ServedCalls | None = None,
    ):
        """`backend` answers instead of a simulated profile of its own (evalkit's agent runner serves the
        run's backend, recorded or replayed, this way); `observer` watches run URLs."""
        self.profile = profile
        self.sim = (
            SimulatedBackend(entry=BackendEntry(label="sim", kind="sim", model=profile)) if backend is None else None
        )
        self.backend: Backend = self.sim or backend  # type: ignore[assignment]  # one of the two is given
        self.label = self.sim.profile.label() if self.sim else ("SIMULATED" if self.backend.simulated else "")
        self.observer = observer
        self.index = ScenarioIndex(scenarios)
        self.requests = 0
        self.limits = ServeLimits()
        self.gate = ConnectionGate(self.limits.max_connections, self.limits.idle_timeout_s)
        self.created = int(time.time())  # OpenAI's `created`: the server's start, so an answer never varies
        self._unknown: OrderedDict[bytes, None] = OrderedDict()

    def app(self) -> web.Application:
        """The application; listen with `self.gate.listen` to hold the connection limit (sim_limits.py)."""
        app = web.Application(
            middlewares=[self._label_every_answer, json_errors, self.gate.track],
            client_max_size=self.limits.max_body_bytes,
            # bodies are inflated by sim_limits.read_json, counted; the keep-alive timer is the idle timeout
            handler_args={"auto_decompress": False, "keepalive_timeout": self.limits.idle_timeout_s},
        )
        app.router.add_get("/health", self._health)
        app.router.add_get("/v1/health", self._health)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/run/{token}/v1/models", self._models)
        app.router.add_post("/run/{token}/v1/chat/completions", self._chat)
        app.router.add_post("/run/{token}/v1/messages", self._messages)
        return app

    @web.middleware
    async def _label_every_answer(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            if self.label:
                exc.headers[SIMULATED_HEADER] = self.label
            raise
        if self.label:
            response.headers[SIMULATED_HEADER] = self.label
        return response

    def description(self) -> dict[str, Any]:
        return {
            "status": "ok",
            "simulated": True,
            "label": self.label,
            "model": self.profile,
            "scenarios": len(self.index),
            "profile": self.sim.profile.model_dump(exclude_none=True) if self.sim else {},
        }

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response(self.description())

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": self.profile, "object": "model", "owned_by": "evalkit-sim", "simulated": True}
        return web.json_response({"object": "list", "data": [{**model, "label": self.label}]})

    async def _props(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "simulated": True,
                "label": self.label,
                "model_alias": self.profile,
                "total_slots": 64,
                "chat_template_caps": {"supports_tools": True},
                "default_generation_settings": {"n_ctx": 1 << 20},
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._answer(request, validate_openai, openai_call, openai_reply, openai_events)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        return await self._answer(request, validate_anthropic, anthropic_call, anthropic_reply, anthropic_events)

    async def _answer(
        self,
        request: web.Request,
        validate: Validator,
        read: Reader,
        write: Callable[[Completion, str, str, int], dict[str, Any]],
        events: Events,
    ) -> web.StreamResponse:
        run = RunToken.decode(request.match_info["token"]) if "token" in request.match_info else None
        if "token" in request.match_info and run is None:
            raise RequestError(404, "not a run URL evalkit made: /run/<token>/v1")
        body = await read_json(request, self.limits)
        headers = {k.lower(): v for k, v in request.headers.items()}
        validate(body, headers)
        call = honoured(body, read(body, {**headers, **(run.headers() if run else {})}, self.index))
        if isinstance(call, str):
            raise RequestError(400, call)
        self.requests += 1
        if call.scenario is None and len(self.index):
            self._warn_unknown(call)
        if run is not None and self.observer is not None:
            admitted = self.observer.admit(run, call.context)
            if isinstance(admitted, str):
                raise RequestError(400, admitted)
            call = SimCall(call.request, admitted, call.scenario)
        try:
            completion = await self._complete(run, call)
        finally:
            if run is not None and self.observer is not None:
                self.observer.finished(run)
        model = body.get("model") if isinstance(body.get("model"), str) else self.profile
        reply = write(completion, str(model), f"sim-{call.context.seed}-{call.context.call_index}", self.created)
        headers = {SCENARIO_HEADER: call.scenario or "unknown"}
        if body.get("stream") is True:  # the same reply, in pieces (evalkit/backends/sim_stream.py)
            return await send_events(request, events(reply, body), {**headers, SIMULATED_HEADER: self.label})
        return web.json_response(reply, headers=headers)

    async def _complete(self, run: RunToken | None, call: SimCall) -> Completion:
        try:
            completion = await self.backend.complete(call.request, call.context)
        except ReplayMiss as miss:
            if run is not None and self.observer is not None:
                self.observer.missed(run, miss)
            raise RequestError(500, str(miss)) from miss
        except BackendError as exc:  # the backend behind this front stayed down: the caller's infra error
            raise RequestError(502, f"the model backend failed: {exc}") from None
        if run is not None and self.observer is not None:
            self.observer.served(run, call, completion)
        return completion

    def unknown_openings(self) -> int:
        """How many unknown openings the server remembers having warned about (at most a bound)."""
        return len(self._unknown)

    def _warn_unknown(self, call: SimCall) -> None:
        """Warn once per unknown opening; only a digest of the last `UNKNOWN_OPENINGS_KEPT` is kept."""
        first = next((m.content for m in call.request.messages if m.role == "user"), "")
        digest = hashlib.sha256(first.encode("utf-8", "surrogatepass")).digest()
        if digest in self._unknown:
            self._unknown.move_to_end(digest)
            return
        self._unknown[digest] = None
        if len(self._unknown) > UNKNOWN_OPENINGS_KEPT:
            self._unknown.popitem(last=False)
        log.warning("no known scenario opens with %r: answering as chat", first[:60])
