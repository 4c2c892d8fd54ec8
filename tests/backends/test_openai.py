"""`kind: openai` against a scripted Chat Completions endpoint: request fields, response_format for a
schema, the bearer key, string-encoded arguments, and `/models` provenance that never stops a run."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from evalkit.backends.openai import OpenAIBackend
from evalkit.chat import Completion, Constraint, Message, Sampling, ToolCall
from evalkit.errors import BackendError, UnsupportedFeature
from tests.backends import CONTEXT, TOOLS, MockServer, Step, arun, entry, payload, request

CHAT = "POST /v1/chat/completions"
KEY = "sk-proj-test-key-0123"


def backend(
    server: MockServer, *, model: str = "gpt-4o-mini", api_key: str | None = KEY, **extra: Any
) -> OpenAIBackend:
    return OpenAIBackend(entry=entry("openai", model=model, **extra), client=server.client(), api_key=api_key)


def sent(req: Any, **kwargs: Any) -> dict[str, Any]:
    server = MockServer({CHAT: [(200, payload("openai", "text"))]})
    arun(backend(server, **kwargs).complete(req, CONTEXT))
    return server.sent(CHAT)


def complete(name_or_step: str | Step) -> Completion:
    step = (200, payload("openai", name_or_step)) if isinstance(name_or_step, str) else name_or_step
    return arun(backend(MockServer({CHAT: [step]})).complete(request(), CONTEXT))


def test_request_fields() -> None:
    body = sent(
        request(
            Message(role="user", content="Weather?"),
            tool_choice="required",
            sampling=Sampling(temperature=0.1, seed=5, max_tokens=50),
        )
    )
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Weather?"}],
        "temperature": 0.1,
        "max_tokens": 50,
        "seed": 5,
        "tools": [t.openai_schema() for t in TOOLS],
        "tool_choice": "required",
    }


def test_options_rename_max_tokens_and_set_parallel_tool_calls() -> None:
    body = sent(
        request(sampling=Sampling(seed=None)),
        options={"max_tokens_field": "max_completion_tokens", "parallel_tool_calls": False},
    )
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body and "seed" not in body
    assert body["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in sent(request(tools=[]), options={"parallel_tool_calls": True})


def test_a_schema_goes_in_response_format_and_a_grammar_is_unsupported() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    body = sent(request(constraint=Constraint(kind="json_schema", json_schema=schema), tools=[]))
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "evalkit_output", "schema": schema, "strict": False},
    }
    server = MockServer({CHAT: [(200, payload("openai", "text"))]})
    with pytest.raises(UnsupportedFeature, match="feature 'grammar'"):
        arun(backend(server).complete(request(constraint=Constraint(kind="grammar", grammar="root ::= x")), CONTEXT))
    assert server.requests == []


def test_tool_results_carry_no_name_field() -> None:
    history = [
        Message(role="user", content="q"),
        Message(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})],
        ),
        Message(role="tool", content="21C", tool_call_id="c1", name="get_weather"),
    ]
    assert sent(request(*history))["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "21C"}


def test_the_key_is_a_bearer_token_and_the_path_is_under_the_base_url() -> None:
    server = MockServer({CHAT: [(200, payload("openai", "text"))]})
    arun(backend(server).complete(request(), CONTEXT))
    assert str(server.requests[0].url) == "https://api.openai.com/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_tool_calls_are_normalised_and_named_choice_stop_still_counts() -> None:
    completion = complete("tool_call")
    assert completion.tool_calls == [ToolCall(id="call_9pW1", name="get_weather", arguments={"city": "Paris"})]
    assert (completion.finish_reason, completion.usage.prompt_tokens, completion.usage.completion_tokens) == (
        "tool_calls",
        82,
        17,
    )
    named = complete("named_tool_choice_stop")
    assert named.finish_reason == "stop" and [c.name for c in named.tool_calls] == ["respond"]


def test_text_reply() -> None:
    completion = complete("text")
    assert (completion.text, completion.tool_calls, completion.finish_reason) == ("Hello there!", [], "stop")


@pytest.mark.parametrize(
    ("step", "retryable"),
    [
        ((429, payload("openai", "error_rate_limit")), True),
        ((502, "<html>Bad Gateway</html>"), True),
        (httpx.ReadTimeout, True),
        ((401, payload("openai", "error_invalid_key")), False),
    ],
)
def test_faults(step: Step, retryable: bool) -> None:
    with pytest.raises(BackendError) as info:
        complete(step)
    assert info.value.retryable is retryable


def test_describe_names_the_served_model() -> None:
    server = MockServer({"GET /v1/models": [(200, payload("openai", "models"))]})
    info = arun(backend(server).describe())
    assert info == {
        "kind": "openai",
        "url": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "max_tokens_field": "max_tokens",
        "served_model": {"id": "gpt-4o-mini", "owned_by": "system", "created": 1721172741},
    }
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_describe_survives_a_proxy_without_models_and_redacts_the_key() -> None:
    server = MockServer({"GET /v1/models": [(404, {"error": {"message": f"no route for key {KEY}"}})]})
    info = arun(backend(server).describe())
    assert info["models_error"].startswith("HTTP 404 from /v1/models") and KEY not in repr(info)
    assert "served_model" not in info


def test_llama_cpps_unparsable_tool_call_is_the_models_malformed_call() -> None:
    """An OpenAI-compatible llama.cpp server (the `direct` entries of configs/forge-smollm2.yaml reach
    llama-server as `kind: openai`) answers HTTP 500 when it cannot parse the model's tool call: the
    model's failure, as with `kind: llama-server`, never retried and never an infra error. Seen in
    SmolLM2's runs through `kind: openai`, recorded as infra errors before this rule."""
    message = (
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 2, "
        "column 31: syntax error while parsing value - invalid string: missing closing quote; "
        "last read: '\"Patient P-1'"
    )
    server = MockServer({CHAT: [(500, {"error": {"code": 500, "message": message, "type": "server_error"}})]})
    reply = arun(backend(server).complete(request(), CONTEXT))
    assert len(server.hits(CHAT)) == 1
    [call] = reply.tool_calls
    assert call.malformed and "missing closing quote" in (call.parse_error or "")
    other = MockServer({CHAT: [(500, {"error": {"code": 500, "message": "overloaded", "type": "server_error"}})]})
    with pytest.raises(BackendError) as raised:
        arun(backend(other).complete(request(), CONTEXT))
    assert raised.value.retryable and raised.value.status == 500
