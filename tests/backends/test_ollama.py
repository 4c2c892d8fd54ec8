"""`kind: ollama` against a scripted Ollama: native `/api/chat` requests (options, format, tool results),
object-valued tool-call arguments, no tool_choice, and the model digest and capabilities in `describe()`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from evalkit.backends.ollama import OllamaBackend
from evalkit.chat import Completion, Constraint, Message, Sampling, ToolCall
from evalkit.errors import BackendError, UnsupportedFeature
from tests.backends import CONTEXT, TOOLS, MockServer, Step, arun, entry, payload, request

URL = "http://ollama.test:11434"
CHAT = "POST /api/chat"


def backend(server: MockServer, *, model: str = "llama3.2", api_key: str | None = None, **extra: Any) -> OllamaBackend:
    return OllamaBackend(entry=entry("ollama", model=model, url=URL, **extra), client=server.client(), api_key=api_key)


def ollama_server(*steps: Step, show: str = "show") -> MockServer:
    return MockServer(
        {
            "POST /api/show": [(200, payload("ollama", show))],
            "GET /api/tags": [(200, payload("ollama", "tags"))],
            CHAT: list(steps) or [(200, payload("ollama", "chat_text"))],
        }
    )


def sent(req: Any, **kwargs: Any) -> dict[str, Any]:
    server = ollama_server()
    arun(backend(server, **kwargs).complete(req, CONTEXT))
    return server.sent(CHAT)


def complete(name_or_step: str | Step, req: Any = None) -> Completion:
    step = (200, payload("ollama", name_or_step)) if isinstance(name_or_step, str) else name_or_step
    return arun(backend(ollama_server(step)).complete(req or request(), CONTEXT))


# -- the request ----------------------------------------------------------------------------------------


def test_request_puts_sampling_in_options_and_never_streams() -> None:
    body = sent(
        request(
            Message(role="system", content="Be brief."),
            Message(role="user", content="Weather?"),
            sampling=Sampling(temperature=0.3, seed=11, max_tokens=40),
        )
    )
    assert body == {
        "model": "llama3.2",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
        "stream": False,
        "options": {"temperature": 0.3, "num_predict": 40, "seed": 11},
        "tools": [t.openai_schema() for t in TOOLS],
    }


def test_num_ctx_keep_alive_and_think_come_from_the_entry_options() -> None:
    body = sent(
        request(sampling=Sampling(seed=None)),
        options={"num_ctx": "8192", "keep_alive": "10m", "think": False, "unrelated": 1},
    )
    assert body["options"] == {"temperature": 0.7, "num_predict": 256, "num_ctx": 8192}  # no seed, int num_ctx
    assert body["keep_alive"] == "10m" and body["think"] is False and "unrelated" not in body


def test_a_json_schema_constraint_becomes_format() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    body = sent(request(constraint=Constraint(kind="json_schema", json_schema=schema), tools=[]))
    assert body["format"] == schema and "tools" not in body


def test_a_grammar_is_unsupported_unless_optional() -> None:
    server = ollama_server()
    with pytest.raises(UnsupportedFeature, match="feature 'grammar'"):
        arun(backend(server).complete(request(constraint=Constraint(kind="grammar", grammar="root ::= x")), CONTEXT))
    assert server.requests == []
    optional = Constraint(kind="grammar", grammar="root ::= x", optional=True)
    completion = arun(backend(server).complete(request(constraint=optional), CONTEXT))
    assert completion.constraint_dropped and "format" not in server.sent(CHAT)


@pytest.mark.parametrize("choice", ["required", "none"])
def test_tool_choice_is_unsupported(choice: str) -> None:
    server = ollama_server()
    with pytest.raises(UnsupportedFeature, match=f"tool_choice_{choice}"):
        arun(backend(server).complete(request(tool_choice=choice), CONTEXT))
    assert server.requests == []


def test_tool_choice_auto_is_what_ollama_does_anyway_and_is_not_sent() -> None:
    assert "tool_choice" not in sent(request(tool_choice="auto"))


def test_supports_lists_only_native_tools_and_json_schema() -> None:
    ollama = backend(ollama_server())
    assert ollama.supports("native_tools") and ollama.supports("json_schema")
    for feature in ("tool_choice_required", "tool_choice_any", "grammar", "grammar_with_tools"):
        assert not ollama.supports(feature)


def test_tool_history_uses_object_arguments_and_tool_name() -> None:
    history = [
        Message(role="user", content="Weather in Paris?"),
        Message(
            role="assistant",
            content="",
            origin="model",
            tool_calls=[
                ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),
                ToolCall(id="c2", name="respond", arguments=None, raw_arguments="{oops", parse_error="invalid JSON"),
            ],
        ),
        Message(role="tool", content='{"temp": 21}', tool_call_id="c1", name="get_weather", origin="mock"),
    ]
    messages = sent(request(*history))["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "respond", "arguments": {}}},
        ],
    }  # Ollama needs an object
    assert messages[2] == {"role": "tool", "content": '{"temp": 21}', "tool_name": "get_weather"}


# -- the answer -----------------------------------------------------------------------------------------


def test_a_tool_call_with_object_arguments_is_normalised() -> None:
    completion = complete("chat_tool_call")
    assert completion.tool_calls == [ToolCall(id="call_w8yk2jq1", name="get_weather", arguments={"city": "Paris"})]
    assert completion.finish_reason == "stop"  # Ollama says "stop" for a call: the calls decide
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (212, 19)
    assert completion.latency_s < 1.0  # measured here, not total_duration (1.3 s)


def test_older_servers_without_ids_and_string_arguments_are_kept() -> None:
    weather, respond = complete("chat_tool_call_legacy").tool_calls
    assert (weather.id, weather.name, weather.arguments) == ("", "get_weather", {"city": "Oslo"})
    assert respond.malformed and respond.raw_arguments == '{"message": "checking"' and respond.parse_error


def test_text_and_length_replies() -> None:
    text = complete("chat_text")
    assert (text.text, text.tool_calls, text.finish_reason) == ("Hello! How can I help you today?", [], "stop")
    cut = complete("chat_length")
    assert cut.finish_reason == "length" and cut.tool_calls == []  # JSON in text is not a call


def test_a_missing_done_reason_is_unknown() -> None:
    body = payload("ollama", "chat_text")
    del body["done_reason"]
    assert complete((200, body)).finish_reason == "unknown"


def test_an_error_object_in_a_200_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="ollama error: an error was encountered") as info:
        complete("chat_error_200")
    assert not info.value.retryable


def test_an_unreadable_shape_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="unexpected /api/chat shape"):
        complete((200, {"done": True}))


@pytest.mark.parametrize(
    ("step", "retryable"),
    [
        (httpx.ConnectError, True),
        (httpx.ReadTimeout, True),
        ((503, {"error": "server busy"}), True),
        ((500, {"error": "llama runner process has terminated: signal: killed"}), True),
        ((404, payload("ollama", "error_model_not_found")), False),
        ((400, {"error": "invalid options"}), False),
    ],
)
def test_faults(step: Step, retryable: bool) -> None:
    with pytest.raises(BackendError) as info:
        complete(step)
    assert info.value.retryable is retryable


# -- describe() -----------------------------------------------------------------------------------------


def test_describe_reports_the_digest_details_and_capabilities() -> None:
    server = ollama_server()
    ollama = backend(server, options={"num_ctx": 4096, "keep_alive": -1})
    info = arun(ollama.describe())
    assert server.sent("POST /api/show") == {"model": "llama3.2"}
    assert info == {
        "kind": "ollama",
        "url": URL,
        "model": "llama3.2",
        "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",  # matched as llama3.2:latest
        "details": payload("ollama", "show")["details"],
        "capabilities": ["completion", "tools"],
        "modified_at": "2025-06-10T09:21:37.044121087Z",
        "options": {"num_ctx": 4096, "keep_alive": -1},
    }


def test_a_tagged_model_matches_its_own_tag() -> None:
    info = arun(backend(ollama_server(show="show_no_tools"), model="gemma3:270m").describe())
    assert info["digest"] == "e7d36fb2c3b3293cfe56d55889867a064b3a2b22e98335f2e6e8a387e081d6be"


def test_a_model_missing_from_tags_has_no_digest() -> None:
    assert arun(backend(ollama_server(), model="mistral").describe())["digest"] is None


def test_a_model_without_the_tools_capability_makes_native_tools_unsupported() -> None:
    server = ollama_server(show="show_no_tools")
    ollama = backend(server, model="gemma3:270m")
    arun(ollama.describe())
    assert not ollama.supports("native_tools")
    with pytest.raises(UnsupportedFeature, match="native_tools"):
        arun(ollama.complete(request(), CONTEXT))
    assert not server.hits(CHAT)
    arun(ollama.complete(request(tools=[]), CONTEXT))  # prompt mode still runs
    assert "tools" not in server.sent(CHAT)


def test_describe_fails_loudly_when_the_model_is_not_pulled() -> None:
    server = MockServer({"POST /api/show": [(404, payload("ollama", "error_model_not_found"))]})
    with pytest.raises(BackendError, match="not found, try pulling it first") as info:
        arun(backend(server, model="llama9").describe())
    assert not info.value.retryable
