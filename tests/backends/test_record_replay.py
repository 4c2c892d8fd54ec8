"""`--record DIR` and `kind: replay`: a real backend (on a scripted llama-server) is recorded, then served
back with no server; a request that changed since recording is a `ReplayMiss`, never a wrong answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends import create_backend
from evalkit.backends.base import RetryPolicy, call_with_retries
from evalkit.backends.llama_server import LlamaServerBackend
from evalkit.backends.recording import PROVENANCE_FILE, RECORDINGS_FILE, RecordingBackend, request_key
from evalkit.backends.replay import ReplayBackend, first_difference
from evalkit.chat import CallContext, ChatRequest, Completion, Constraint, Message, Sampling
from evalkit.errors import BackendError, ConfigError, ReplayMiss, UnsupportedFeature
from evalkit.run.loop import RunState, run_loop
from evalkit.strategies import build_stack
from tests.backends import CONTEXT, WEATHER, MockServer, Step, arun, entry, payload, request

CHAT = "POST /v1/chat/completions"
NO_WAIT = RetryPolicy(attempts=3, base_delay_s=0, max_delay_s=0)


def llama(server: MockServer) -> LlamaServerBackend:
    return LlamaServerBackend(
        entry=entry("llama-server", model="smollm2", url="http://gpu-box.test:8080"), client=server.client()
    )


def llama_server(*chat: Step, props: str = "props") -> MockServer:
    return MockServer(
        {
            "GET /health": [(200, {"status": "ok"})],
            "GET /props": [(200, payload("llama_server", props))],
            CHAT: list(chat),
        }
    )


def replay(directory: Path) -> ReplayBackend:
    return ReplayBackend(entry=entry("replay", options={"dir": str(directory)}))


def lines(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / RECORDINGS_FILE).read_text().splitlines()]


def context(call_index: int = 0, run_id: str = "r/0") -> CallContext:
    return CallContext(run_id=run_id, seed=1, call_index=call_index)


NUDGED = [
    Message(role="user", content="What is the weather in Paris?"),
    Message(role="assistant", content="Let me think.", origin="model"),
    Message(role="user", content="Call a tool now.", origin="guard"),
]


# -- recording ------------------------------------------------------------------------------------------


def test_recording_answers_as_the_inner_backend_and_writes_each_call(tmp_path: Path) -> None:
    server = llama_server((200, payload("llama_server", "chat_tool_call")))
    recorder = RecordingBackend(llama(server), tmp_path / "rec")
    req = request(*NUDGED)
    completion = arun(recorder.complete(req, context(2, "cell/7")))
    assert [c.name for c in completion.tool_calls] == ["get_weather"]
    (line,) = lines(tmp_path / "rec")
    assert line["key"] == request_key("llama-server", "smollm2", req)
    assert (line["run_id"], line["call_index"], line["kind"], line["model"]) == ("cell/7", 2, "llama-server", "smollm2")
    assert Completion.model_validate(line["completion"]) == completion
    assert ChatRequest.model_validate(line["request"]).messages[2].content == "Call a tool now."
    assert all("origin" not in m for m in line["request"]["messages"])  # harness bookkeeping stays out


def test_recording_keeps_errors_with_their_retryability_and_status(tmp_path: Path) -> None:
    busy, text = (503, payload("llama_server", "error_slots_busy")), (200, payload("llama_server", "chat_text"))
    server = llama_server(busy, text)
    recorder = RecordingBackend(llama(server), tmp_path)
    completion, retries = arun(call_with_retries(lambda: recorder.complete(request(), CONTEXT), NO_WAIT))
    assert retries == 1 and completion.text == "Hello! How can I help you today?"
    error, answer = lines(tmp_path)
    assert error["error"] == {
        "message": "HTTP 503 from /v1/chat/completions: no slot available",
        "retryable": True,
        "status": 503,
        "unsupported": False,
    }
    assert error["key"] == answer["key"] and "completion" in answer


def test_provenance_holds_describe_and_the_final_supports_answers(tmp_path: Path) -> None:
    recorder = RecordingBackend(llama(llama_server(props="props_no_tools")), tmp_path)
    described = arun(recorder.describe())
    doc = json.loads((tmp_path / PROVENANCE_FILE).read_text())
    assert doc["describe"] == described and doc["kind"] == "llama-server" and doc["simulated"] is False
    assert doc["supports"]["native_tools"] is False and doc["supports"]["grammar"] is True  # after /props


def test_a_failed_describe_is_recorded_and_raised(tmp_path: Path) -> None:
    server = MockServer({"GET /health": [(401, {"error": {"code": 401, "message": "Invalid API Key"}})]})
    with pytest.raises(BackendError):
        arun(RecordingBackend(llama(server), tmp_path).describe())
    doc = json.loads((tmp_path / PROVENANCE_FILE).read_text())
    assert doc["describe"] is None and "Invalid API Key" in doc["describe_error"]


# -- replay ---------------------------------------------------------------------------------------------


def record(
    directory: Path, calls: list[tuple[ChatRequest, CallContext]], *chat: Step, props: str = "props"
) -> list[Completion | BackendError]:
    recorder = RecordingBackend(llama(llama_server(*chat, props=props)), directory)
    arun(recorder.describe())
    out: list[Completion | BackendError] = []
    for req, ctx in calls:
        try:
            out.append(arun(recorder.complete(req, ctx)))
        except BackendError as exc:
            out.append(exc)
    return out


def test_replay_serves_the_recorded_answers_without_a_server(tmp_path: Path) -> None:
    first, second = request(*NUDGED[:1]), request(*NUDGED)
    recorded = record(
        tmp_path,
        [(first, context(0)), (second, context(1))],
        (200, payload("llama_server", "chat_text")),
        (200, payload("llama_server", "chat_tool_call")),
    )
    player = replay(tmp_path)
    assert arun(player.complete(first, context(0))) == recorded[0]
    assert arun(player.complete(second, context(1))) == recorded[1]
    assert (player.kind, player.recorded_kind, player.model, player.simulated) == (
        "replay",
        "llama-server",
        "smollm2",
        False,
    )


def test_replay_matches_on_the_request_not_the_origin_marks(tmp_path: Path) -> None:
    record(tmp_path, [(request(*NUDGED), CONTEXT)], (200, payload("llama_server", "chat_tool_call")))
    relabelled = request(*[m.model_copy(update={"origin": "scenario"}) for m in NUDGED])
    assert arun(replay(tmp_path).complete(relabelled, CONTEXT)).tool_calls[0].name == "get_weather"


def test_replay_describe_and_supports_come_from_the_recording(tmp_path: Path) -> None:
    record(
        tmp_path, [(request(tools=[]), CONTEXT)], (200, payload("llama_server", "chat_text")), props="props_no_tools"
    )
    player = replay(tmp_path)
    described = arun(player.describe())
    assert described["build_info"] == "b6123-79c1160b" and described["replayed_from"] == str(tmp_path.resolve())
    assert not player.supports("native_tools") and player.supports("grammar")


def test_recorded_errors_are_raised_again_and_retried_the_same_way(tmp_path: Path) -> None:
    req = request()
    recorder = RecordingBackend(
        llama(
            llama_server(
                httpx.ReadTimeout,
                (503, payload("llama_server", "error_slots_busy")),
                (200, payload("llama_server", "chat_tool_call")),
            )
        ),
        tmp_path,
    )
    arun(recorder.describe())
    live, live_retries = arun(call_with_retries(lambda: recorder.complete(req, CONTEXT), NO_WAIT))
    player = replay(tmp_path)
    with pytest.raises(BackendError, match="timeout") as timeout:
        arun(player.complete(req, CONTEXT))
    assert timeout.value.retryable and timeout.value.status is None
    with pytest.raises(BackendError, match="no slot available") as busy:
        arun(player.complete(req, CONTEXT))
    assert busy.value.retryable and busy.value.status == 503
    assert arun(player.complete(req, CONTEXT)) == live and live_retries == 2


def test_a_recorded_unsupported_feature_replays_as_unsupported(tmp_path: Path) -> None:
    req = request(constraint=Constraint(kind="grammar", grammar="root ::= x"))
    (error,) = record(tmp_path, [(req, CONTEXT)])
    assert isinstance(error, UnsupportedFeature)
    with pytest.raises(UnsupportedFeature, match="grammar_with_tools") as info:
        arun(replay(tmp_path).complete(req, CONTEXT))
    assert not info.value.retryable


def test_a_changed_nudge_is_a_miss_naming_the_difference(tmp_path: Path) -> None:
    record(tmp_path, [(request(*NUDGED), CONTEXT)], (200, payload("llama_server", "chat_tool_call")))
    changed = request(*NUDGED[:2], Message(role="user", content="Please use a tool.", origin="guard"))
    with pytest.raises(ReplayMiss) as info:
        arun(replay(tmp_path).complete(changed, CONTEXT))
    assert str(info.value) == (
        f"replay {tmp_path.resolve()}: run r/0 call 0: the request changed since recording: messages[2].content "
        'differs (recorded "Call a tool now.", now "Please use a tool.") (record again with --record)'
    )


def test_a_changed_grammar_is_a_miss_naming_the_difference(tmp_path: Path) -> None:
    grammar = Constraint(kind="grammar", grammar='root ::= "{" call "}"')
    record(tmp_path, [(request(tools=[], constraint=grammar), CONTEXT)], (200, payload("llama_server", "chat_text")))
    other = grammar.model_copy(update={"grammar": 'root ::= "[" call "]"'})
    with pytest.raises(ReplayMiss, match=r"constraint\.grammar differs"):
        arun(replay(tmp_path).complete(request(tools=[], constraint=other), CONTEXT))
    with pytest.raises(ReplayMiss, match=r"constraint was recorded but is missing now|constraint differs"):
        arun(replay(tmp_path).complete(request(tools=[]), CONTEXT))


def test_changed_sampling_is_a_miss_too(tmp_path: Path) -> None:
    record(tmp_path, [(request(), CONTEXT)], (200, payload("llama_server", "chat_text")))
    with pytest.raises(ReplayMiss, match=r"sampling\.seed differs \(recorded 42, now 43\)"):
        arun(replay(tmp_path).complete(request(sampling=Sampling(temperature=0.0, seed=43, max_tokens=64)), CONTEXT))


def test_an_exhausted_or_unknown_call_is_a_miss(tmp_path: Path) -> None:
    record(tmp_path, [(request(), CONTEXT)], (200, payload("llama_server", "chat_text")))
    player = replay(tmp_path)
    arun(player.complete(request(), CONTEXT))
    with pytest.raises(ReplayMiss, match="every recorded answer to it has been replayed already"):
        arun(player.complete(request(), CONTEXT))
    with pytest.raises(ReplayMiss, match="run r/9 call 3: no request was recorded for this run and call"):
        arun(player.complete(request(*NUDGED), context(3, "r/9")))


def test_the_same_request_in_many_runs_prefers_its_own_run(tmp_path: Path) -> None:
    record(
        tmp_path,
        [(request(), context(0, "a")), (request(), context(0, "b"))],
        (200, payload("llama_server", "chat_text")),
        (200, payload("llama_server", "chat_tool_call")),
    )
    player = replay(tmp_path)
    assert arun(player.complete(request(), context(0, "b"))).tool_calls  # b's answer, though a's came first
    assert arun(player.complete(request(), context(0, "a"))).text.startswith("Hello")


def test_first_difference_paths() -> None:
    assert first_difference({"a": [1, 2]}, {"a": [1, 2]}) is None
    assert first_difference({"a": [1, 2]}, {"a": [1, 2, 3]}) == "a has 3 items, the recording 2"
    assert first_difference({"a": 1}, {"b": 1}) == "a was recorded but is missing now"
    assert first_difference({"a": 1}, {"a": 1.0}) == "a differs (recorded 1, now 1.0)"


def test_replay_needs_a_recording_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"needs options\.dir"):
        ReplayBackend(entry=entry("replay"))
    with pytest.raises(ConfigError, match="cannot read"):
        replay(tmp_path / "nowhere")
    (tmp_path / PROVENANCE_FILE).write_text(json.dumps({"kind": "llama-server", "model": "m"}))
    with pytest.raises(ConfigError, match="does not exist"):
        replay(tmp_path)


def test_a_cut_short_last_line_is_forgiven_but_a_corrupt_one_is_not(tmp_path: Path) -> None:
    record(tmp_path, [(request(), CONTEXT)], (200, payload("llama_server", "chat_text")))
    path = tmp_path / RECORDINGS_FILE
    whole = path.read_text()
    path.write_text(whole + whole[: len(whole) // 2])  # a killed recorder's last line
    assert arun(replay(tmp_path).complete(request(), CONTEXT)).text.startswith("Hello")
    path.write_text("{not json}\n" + whole)
    with pytest.raises(ConfigError, match=f"{RECORDINGS_FILE}:1: not a recording line"):
        replay(tmp_path)


def test_create_backend_builds_a_replay(tmp_path: Path) -> None:
    record(tmp_path, [(request(), CONTEXT)], (200, payload("llama_server", "chat_text")))
    player = create_backend(entry("replay", options={"dir": str(tmp_path)}), httpx.AsyncClient())
    assert isinstance(player, ReplayBackend) and arun(player.complete(request(), CONTEXT)).text


# -- a whole run, recorded and replayed -----------------------------------------------------------------


def run(backend: Any, stack: list[Any], mode: str = "native") -> RunState:
    state, _ = arun(
        run_loop(
            WEATHER,
            build_stack(stack),
            backend,
            mode=mode,  # type: ignore[arg-type]
            sampling=Sampling(temperature=0.0, seed=5, max_tokens=64),
            run_id="weather/0",
            seed=5,
            policy=NO_WAIT,
        )
    )
    return state


NUDGE = [("retry_nudge", {"message": "Use a tool.", "max_retries": 1})]
SCRIPT: list[Step] = [
    (200, payload("llama_server", "chat_text")),
    (200, payload("llama_server", "chat_tool_call")),
    (200, payload("llama_server", "chat_final_answer")),
]


def test_a_recorded_run_replays_to_the_same_result(tmp_path: Path) -> None:
    server = llama_server(*SCRIPT)
    live = run(RecordingBackend(llama(server), tmp_path), NUDGE)
    assert live.outcome == "final_answer" and live.retries == 1 and len(server.hits(CHAT)) == 3
    replayed = run(replay(tmp_path), NUDGE)
    assert (replayed.outcome, replayed.reply, replayed.retries) == (live.outcome, live.reply, live.retries)
    assert [c.completion for c in replayed.calls] == [c.completion for c in live.calls]


def test_replaying_a_run_with_a_different_nudge_is_a_miss(tmp_path: Path) -> None:
    run(RecordingBackend(llama(llama_server(*SCRIPT)), tmp_path), NUDGE)
    with pytest.raises(ReplayMiss, match=r'run weather/0 call 1: .*content differs \(recorded "Use a tool\."'):
        run(replay(tmp_path), [("retry_nudge", {"message": "You must call get_weather.", "max_retries": 1})])


def test_replaying_a_run_with_a_different_grammar_is_a_miss(tmp_path: Path) -> None:
    answer = {
        "choices": [
            {
                "finish_reason": "stop",
                "index": 0,
                "message": {"role": "assistant", "content": '{"name": "get_weather", "arguments": {"city": "Paris"}}'},
            }
        ],
        "usage": {"prompt_tokens": 200, "completion_tokens": 15},
    }
    grammar = [("grammar", {"mode": "grammar", "max_string_chars": 60})]
    server = llama_server((200, answer), (200, payload("llama_server", "chat_final_answer")))
    state = run(RecordingBackend(llama(server), tmp_path), grammar, mode="prompt")
    assert state.calls[0].constraint and state.calls[0].completion.tool_calls[0].name == "get_weather"
    assert run(replay(tmp_path), grammar, mode="prompt").outcome == state.outcome
    with pytest.raises(ReplayMiss, match=r"call 0: the request changed since recording: constraint\.grammar differs"):
        run(replay(tmp_path), [("grammar", {"mode": "grammar", "max_string_chars": 50})], mode="prompt")


# --- one run's stored completions (`ReplayBackend.of_run`: rescore and sim fit) -----------------


def _stored_run() -> Any:
    """A committed run with two or more model calls, each with its stored completion."""
    from evalkit.results.reader import load_results

    results = load_results([Path(__file__).resolve().parents[2] / "results" / "compare-models.jsonl"])
    return next(r for r in results.runs if len(r.calls) >= 2)


def test_a_runs_completions_are_served_in_order_whatever_the_request() -> None:
    run = _stored_run()
    seen: list[tuple[int, str]] = []
    backend = ReplayBackend.of_run(run, lambda req, ctx, done: seen.append((ctx.call_index, done.text)))
    assert (backend.kind, backend.model, backend.simulated) == ("replay", run.cell.model, run.simulated)
    for index, call in enumerate(run.calls):
        context = CallContext(run_id=run.run_id, seed=run.seed, call_index=index)
        assert arun(backend.complete(request(Message(role="user", content=f"changed {index}")), context)) == (
            call.completion
        )
    assert seen == [(i, c.completion.text) for i, c in enumerate(run.calls)]
    beyond = CallContext(run_id=run.run_id, seed=run.seed, call_index=len(run.calls))
    with pytest.raises(ReplayMiss, match=f"needs more model calls than the {len(run.calls)} recorded"):
        arun(backend.complete(request(), beyond))
    assert arun(backend.describe())["replayed_from"] == f"run {run.run_id}"
