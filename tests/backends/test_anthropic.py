"""`kind: anthropic` against a scripted Messages API: system prompt placement, tool_use/tool_result blocks,
alternating roles, tool_choice objects, no constraints, and the `x-api-key` header."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from evalkit.backends.anthropic import API_VERSION, AnthropicBackend
from evalkit.chat import Completion, Constraint, Message, Sampling, ToolCall
from evalkit.errors import BackendError, UnsupportedFeature
from tests.backends import CONTEXT, GET_WEATHER, TOOLS, MockServer, Step, arun, entry, payload, request

MESSAGES = "POST /v1/messages"
KEY = "sk-ant-api03-test-key"


def backend(server: MockServer, *, api_key: str | None = KEY, url: str | None = None) -> AnthropicBackend:
    return AnthropicBackend(
        entry=entry("anthropic", model="claude-3-5-haiku-20241022", url=url), client=server.client(), api_key=api_key
    )


def sent(req: Any, **kwargs: Any) -> dict[str, Any]:
    server = MockServer({MESSAGES: [(200, payload("anthropic", "text"))]})
    arun(backend(server, **kwargs).complete(req, CONTEXT))
    return server.sent(MESSAGES)


def complete(name_or_step: str | Step) -> Completion:
    step = (200, payload("anthropic", name_or_step)) if isinstance(name_or_step, str) else name_or_step
    return arun(backend(MockServer({MESSAGES: [step]})).complete(request(), CONTEXT))


# -- the request ----------------------------------------------------------------------------------------


def test_the_system_prompt_is_top_level_and_tools_use_input_schema() -> None:
    body = sent(
        request(
            Message(role="system", content="Be brief."),
            Message(role="system", content="Use tools."),
            Message(role="user", content="Weather?"),
            sampling=Sampling(temperature=0.2, seed=99, max_tokens=300),
        )
    )
    assert body == {
        "model": "claude-3-5-haiku-20241022",
        "system": "Be brief.\n\nUse tools.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather?"}]}],
        "max_tokens": 300,
        "temperature": 0.2,  # there is no seed on this API
        "tools": [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS],
    }
    assert body["tools"][0]["input_schema"] == GET_WEATHER.parameters


def test_no_system_field_without_a_system_message_and_no_tools_field_without_tools() -> None:
    body = sent(request(tools=[]))
    assert "system" not in body and "tools" not in body and "tool_choice" not in body


def test_tool_use_and_tool_result_blocks_with_merged_alternating_roles() -> None:
    history = [
        Message(role="system", content="sys"),
        Message(role="user", content="Weather in Paris and Rome?"),
        Message(
            role="assistant",
            content="Checking both.",
            origin="model",
            tool_calls=[
                ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"}),
                ToolCall(id="toolu_2", name="get_weather", arguments=None, raw_arguments="{bad", parse_error="x"),
            ],
        ),
        Message(role="tool", content='{"temp": 21}', tool_call_id="toolu_1", name="get_weather", origin="mock"),
        Message(
            role="tool", content="error: invalid arguments", tool_call_id="toolu_2", name="get_weather", origin="mock"
        ),
        Message(role="user", content="Now answer.", origin="guard"),
        Message(role="assistant", content="", origin="model"),  # an empty turn is left out
        Message(role="user", content="Well?", origin="guard"),
    ]
    assert sent(request(*history))["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}},
            ],
        },  # input must be an object
        {
            "role": "user",
            "content": [  # all of one turn's results, then the nudges, in one user message
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"temp": 21}'},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "error: invalid arguments"},
                {"type": "text", "text": "Now answer."},
                {"type": "text", "text": "Well?"},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("choice", "wire"), [("auto", {"type": "auto"}), ("required", {"type": "any"}), ("none", {"type": "none"})]
)
def test_tool_choice_is_sent_as_an_object(choice: str, wire: dict[str, str]) -> None:
    assert sent(request(tool_choice=choice))["tool_choice"] == wire


def test_supports_tool_choice_but_no_constraints() -> None:
    anthropic = backend(MockServer({}))
    assert anthropic.supports("native_tools") and anthropic.supports("tool_choice_required")
    assert anthropic.supports("tool_choice_any")
    for feature in ("grammar", "json_schema", "grammar_with_tools"):
        assert not anthropic.supports(feature)


@pytest.mark.parametrize(
    "constraint",
    [Constraint(kind="grammar", grammar="root ::= x"), Constraint(kind="json_schema", json_schema={"type": "object"})],
)
def test_constraints_are_unsupported_and_nothing_is_sent(constraint: Constraint) -> None:
    server = MockServer({MESSAGES: [(200, payload("anthropic", "text"))]})
    with pytest.raises(UnsupportedFeature, match=f"feature '{constraint.kind}'"):
        arun(backend(server).complete(request(constraint=constraint), CONTEXT))
    assert server.requests == []


def test_an_optional_grammar_is_dropped_and_flagged() -> None:
    server = MockServer({MESSAGES: [(200, payload("anthropic", "text"))]})
    optional = Constraint(kind="grammar", grammar="root ::= x", optional=True)
    assert arun(backend(server).complete(request(constraint=optional), CONTEXT)).constraint_dropped
    assert "grammar" not in server.sent(MESSAGES)


def test_headers_carry_the_key_and_version_and_the_path_is_v1_messages() -> None:
    server = MockServer({MESSAGES: [(200, payload("anthropic", "text"))]})
    arun(backend(server).complete(request(), CONTEXT))
    (req,) = server.requests
    assert str(req.url) == "https://api.anthropic.com/v1/messages"
    assert req.headers["x-api-key"] == KEY and req.headers["anthropic-version"] == API_VERSION == "2023-06-01"
    assert "authorization" not in req.headers


def test_a_compatible_server_without_a_key_gets_no_key_header() -> None:
    server = MockServer({MESSAGES: [(200, payload("anthropic", "text"))]})
    arun(backend(server, api_key=None, url="http://127.0.0.1:8080").complete(request(), CONTEXT))
    assert str(server.requests[0].url) == "http://127.0.0.1:8080/v1/messages"
    assert "x-api-key" not in server.requests[0].headers


# -- the answer -----------------------------------------------------------------------------------------


def test_text_and_tool_use_blocks_are_normalised() -> None:
    completion = complete("tool_use")
    assert completion.text == "I'll check the weather in Paris."
    assert completion.tool_calls == [
        ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="get_weather", arguments={"city": "Paris"})
    ]
    assert completion.finish_reason == "tool_calls"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (472, 64)


def test_parallel_tool_use_keeps_every_call_in_order() -> None:
    assert [(c.id, c.arguments) for c in complete("parallel_tool_use").tool_calls] == [
        ("toolu_01", {"city": "Paris"}),
        ("toolu_02", {"city": "Rome"}),
    ]


def test_a_tool_use_block_with_a_non_object_input_is_kept_and_flagged() -> None:
    body = payload("anthropic", "tool_use")
    body["content"][1]["input"] = ["Paris"]
    (call,) = complete((200, body)).tool_calls
    assert call.malformed and call.raw_arguments == '["Paris"]' and call.name == "get_weather"


@pytest.mark.parametrize(
    ("name", "finish", "text"),
    [
        ("text", "stop", "Hello! How can I help?"),
        ("max_tokens", "length", "The weather in Paris is"),
        ("refusal", "refusal", ""),
    ],
)
def test_stop_reasons(name: str, finish: str, text: str) -> None:
    completion = complete(name)
    assert (completion.finish_reason, completion.text, completion.tool_calls) == (finish, text, [])


def test_stop_reason_tool_use_without_a_block_is_no_call() -> None:
    body = payload("anthropic", "text") | {"stop_reason": "tool_use"}
    completion = complete((200, body))
    assert completion.tool_calls == [] and completion.finish_reason == "tool_calls"


def test_an_unreadable_shape_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="unexpected Messages API shape"):
        complete((200, {"type": "message", "content": [{"type": "text"}]}))


@pytest.mark.parametrize(
    ("step", "retryable"),
    [
        ((529, payload("anthropic", "error_overloaded")), True),
        ((429, payload("anthropic", "error_rate_limit")), True),
        ((500, {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}), True),
        (httpx.ConnectTimeout, True),
        ((400, payload("anthropic", "error_invalid_request")), False),
        ((401, payload("anthropic", "error_authentication")), False),
    ],
)
def test_faults(step: Step, retryable: bool) -> None:
    with pytest.raises(BackendError) as info:
        complete(step)
    assert info.value.retryable is retryable


def test_the_error_text_is_the_apis_message() -> None:
    with pytest.raises(BackendError, match=r"^HTTP 529 from /v1/messages: Overloaded$"):
        complete((529, payload("anthropic", "error_overloaded")))


def test_describe_makes_no_request_and_holds_no_key() -> None:
    server = MockServer({})
    info = arun(backend(server, url="https://user:pw@proxy.test").describe())
    assert info == {
        "kind": "anthropic",
        "url": "https://proxy.test",
        "model": "claude-3-5-haiku-20241022",
        "api_version": "2023-06-01",
    }
    assert server.requests == []
