"""A property of `evalkit serve sim` (issue 36): whatever JSON a client posts to either endpoint, the
answer is 200 or a 4xx, JSON in the protocol's own shape, never a 500, and the server prints no
traceback. Bodies are drawn near the right shape (a valid request with one part replaced by any JSON
value) and far from it (any JSON value).

Cheap by default (CI runs it every time); `EVALKIT_FUZZ=slow` runs many more examples, or
`EVALKIT_FUZZ=N` N per endpoint (the convention of tests/cli/test_fuzz.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from evalkit.backends.sim_server import SimServer
from evalkit.scenario.model import load_scenario
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
_PROFILE = os.environ.get("EVALKIT_FUZZ", "")
EXAMPLES = 400 if _PROFILE == "slow" else int(_PROFILE) if _PROFILE.isdigit() else 30
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
WEATHER = load_scenario(ROOT / "tests/data/scenarios/e2e_weather.yaml")

JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
TEXT = st.sampled_from(["hi", WEATHER.user_text(0), WEATHER.system, "Result of get_weather: {}", "[UnknownTool] x", ""])
SCHEMA = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={"properties": st.dictionaries(st.sampled_from(["city", "a"]), st.just({"type": "string"}), max_size=2)},
)


def _openai() -> st.SearchStrategy[dict[str, Any]]:
    function = st.fixed_dictionaries({"name": st.sampled_from(["get_weather", "f"]), "parameters": SCHEMA})
    call = st.fixed_dictionaries(
        {
            "id": st.just("c1"),
            "type": st.just("function"),
            "function": st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["get_weather", "x"]),
                    "arguments": st.sampled_from(['{"city": "Paris"}', "{"]),
                }
            ),
        }
    )
    message = st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "developer"]), "content": TEXT}),
        st.fixed_dictionaries(
            {"role": st.just("assistant"), "content": TEXT}, optional={"tool_calls": st.lists(call, max_size=2)}
        ),
        st.fixed_dictionaries({"role": st.just("tool"), "content": TEXT, "tool_call_id": st.just("c1")}),
    )
    return st.fixed_dictionaries(
        {"messages": st.lists(message, min_size=1, max_size=5)},
        optional={
            "model": st.just("small-local"),
            "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"), "function": function}), max_size=2),
            "tool_choice": st.sampled_from(
                ["auto", "required", "none", {"type": "function", "function": {"name": "f"}}]
            ),
            "seed": st.integers(-(2**63), 2**64 - 1),
            "temperature": st.floats(0, 2),
            "max_tokens": st.integers(0, 4096),
            "response_format": st.just({"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}),
            "grammar": st.just('root ::= "x"'),
        },
    )


def _anthropic() -> st.SearchStrategy[dict[str, Any]]:
    block = st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}),
        st.fixed_dictionaries(
            {"type": st.just("tool_use"), "id": st.just("t1"), "name": st.just("get_weather"), "input": st.just({})}
        ),
        st.fixed_dictionaries(
            {"type": st.just("tool_result"), "tool_use_id": st.just("t1"), "content": TEXT},
            optional={"is_error": st.booleans()},
        ),
    )
    message = st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant"]), "content": TEXT | st.lists(block, max_size=3)}
    )
    tool = st.fixed_dictionaries({"name": st.sampled_from(["get_weather", "f"]), "input_schema": SCHEMA})
    return st.fixed_dictionaries(
        {"messages": st.lists(message, min_size=1, max_size=5), "max_tokens": st.integers(1, 4096)},
        optional={
            "system": TEXT,
            "tools": st.lists(tool, max_size=2),
            "tool_choice": st.sampled_from([{"type": "auto"}, {"type": "any"}, {"type": "tool", "name": "f"}]),
            "temperature": st.floats(0, 1),
        },
    )


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        yield from _paths(child, (*prefix, key))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


@st.composite
def bodies(draw: st.DrawFn, valid: st.SearchStrategy[dict[str, Any]]) -> Any:
    """A valid body, one part of it replaced by any JSON value, or any JSON value at all."""
    kind = draw(st.sampled_from(["valid", "mutated", "mutated", "any"]))
    if kind == "any":
        return draw(JSON)
    body = draw(valid)
    if kind == "valid":
        return body
    path = draw(st.sampled_from(list(_paths(body))[1:]))
    return _replace(body, path, draw(JSON))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with sim_http(SimServer("small-local", [WEATHER])) as root:
        yield root


def _check(answer: httpx.Response, anthropic: bool, capfd: pytest.CaptureFixture[str]) -> None:
    assert "Traceback" not in capfd.readouterr().err  # the server (in this process) printed none
    assert answer.status_code == 200 or 400 <= answer.status_code < 500, answer.text
    assert answer.headers["content-type"].startswith("application/json"), answer.text
    body = answer.json()
    if answer.status_code == 200:
        assert body["type"] == "message" if anthropic else body["object"] == "chat.completion"
    elif anthropic:
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}


@SETTINGS
@given(body=bodies(_openai()), seed=st.none() | st.text(max_size=25))
def test_any_chat_completions_body_is_200_or_4xx_json(
    url: str, capfd: pytest.CaptureFixture[str], body: Any, seed: str | None
) -> None:
    headers = {"X-Evalkit-Seed": seed.encode("utf-8")} if seed is not None else {}
    try:
        answer = httpx.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=30)
    except httpx.LocalProtocolError:  # a header value the client itself will not send
        reject()
    _check(answer, False, capfd)


@SETTINGS
@given(body=bodies(_anthropic()))
def test_any_messages_body_is_200_or_4xx_json(url: str, capfd: pytest.CaptureFixture[str], body: Any) -> None:
    _check(httpx.post(url + "/v1/messages", json=body, timeout=30), True, capfd)
