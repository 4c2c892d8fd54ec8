"""Shared backend plumbing: faults mapped to retryable or not (`_http`), request rules and normalisation
(`_wire`), and the retry policy with its bounded exponential backoff and full jitter (`base`)."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from evalkit.backends._http import MAX_ERROR_CHARS, get_json, is_loopback, join_url, post_json
from evalkit.backends._wire import check_tool_choice, constraint_body, normalise_finish, settle_constraint, tool_call
from evalkit.backends.base import RetryPolicy, call_with_retries
from evalkit.chat import Constraint
from evalkit.errors import BackendError, UnsupportedFeature
from evalkit.results.secrets import public_url, redact
from tests.backends import CONTEXT, MockServer, Step, arun, entry, request

URL = "http://model.test:8080/v1/chat/completions"


def post(step: Step, *, timeout: float | None = None, secrets: tuple[str, ...] = ()) -> Any:
    server = MockServer({"POST /v1/chat/completions": [step]})
    return arun(post_json(server.client(), URL, {"q": 1}, deadline_s=timeout, secrets=secrets))


def post_error(step: Step, **kwargs: Any) -> BackendError:
    with pytest.raises(BackendError) as info:
        post(step, **kwargs)
    return info.value


# -- faults ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("exc", [httpx.ConnectTimeout, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout])
def test_timeouts_are_retryable(exc: type[httpx.RequestError]) -> None:
    error = post_error(exc)
    assert error.retryable and error.status is None
    assert error.args[0].startswith(f"timeout ({exc.__name__}) calling {URL}")


@pytest.mark.parametrize("exc", [httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError])
def test_connection_refused_reset_or_cut_short_is_retryable(exc: type[httpx.RequestError]) -> None:
    error = post_error(exc)
    assert error.retryable and exc.__name__ in str(error)


@pytest.mark.parametrize("exc", [httpx.UnsupportedProtocol, httpx.LocalProtocolError])
def test_a_request_that_cannot_be_formed_is_not_retryable(exc: type[httpx.RequestError]) -> None:
    assert not post_error(exc).retryable


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504, 529])
def test_429_and_5xx_are_retryable_and_carry_the_status(status: int) -> None:
    error = post_error((status, {"error": {"code": status, "message": "busy, come back later"}}))
    assert error.retryable and error.status == status
    assert str(error) == f"HTTP {status} from /v1/chat/completions: busy, come back later"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_other_4xx_are_not_retryable(status: int) -> None:
    error = post_error((status, {"error": "the request is wrong"}))
    assert not error.retryable and error.status == status
    assert "the request is wrong" in str(error)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"error": {"message": "Invalid tool_choice", "type": "invalid_request_error"}},
            "Invalid tool_choice",
        ),  # OpenAI
        ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "Overloaded"),  # Anthropic
        ({"error": 'model "x" not found'}, 'model "x" not found'),  # Ollama
        ({"message": "plain message"}, "plain message"),
        ({"error": {"code": 7}}, '{"code": 7}'),  # an error object without a message is kept as JSON
        ({"detail": "nothing known"}, '{"detail": "nothing known"}'),
        ("<html><body><h1>502 Bad Gateway</h1></body></html>", "<html><body><h1>502 Bad Gateway</h1></body></html>"),
    ],
)
def test_error_text_is_the_servers_own_message(body: Any, message: str) -> None:
    assert str(post_error((500, body))).endswith(": " + message)


def test_error_text_is_clipped_and_whitespace_collapsed() -> None:
    error = post_error((500, {"error": "x\n\n" * 1000}))
    text = str(error).split(": ", 1)[1]
    assert len(text) == MAX_ERROR_CHARS and text.endswith("…") and "\n" not in text


def test_a_key_echoed_in_an_error_body_is_redacted() -> None:
    error = post_error((401, {"error": "invalid key sk-live-123456"}), secrets=("sk-live-123456",))
    assert "sk-live-123456" not in str(error) and "[redacted]" in str(error)


@pytest.mark.parametrize(
    "step",
    [
        (200, "<html>proxy login</html>"),  # a wrong URL or a captive portal
        (200, ["not", "an", "object"]),
        lambda req: httpx.Response(200, content=b"\xff\xfe{not utf-8"),
    ],
)
def test_a_200_that_is_not_a_json_object_is_a_non_retryable_error(step: Step) -> None:
    error = post_error(step)
    assert not error.retryable and error.status == 200


DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"choices": ' + b'{"a": ' * 300 + b"1" + b"}" * 300 + b"}"


@pytest.mark.parametrize("status", [200, 500])
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["lists-100000-deep", "object-300-deep"])
def test_a_reply_nested_past_the_parsers_limit_is_one_backend_error(status: int, body: bytes) -> None:
    """Model servers are untrusted: a body nested 100,000 deep is an error naming the path, not a
    RecursionError; an error body that deep still gives the status (and is retried as a 5xx)."""
    error = post_error(lambda req: httpx.Response(status, content=body))
    assert error.status == status and "/v1/chat/completions" in str(error)
    assert error.retryable is (status == 500)
    assert len(str(error)) <= MAX_ERROR_CHARS + 200


def test_a_200_json_object_comes_back_with_its_latency() -> None:
    reply = post((200, {"ok": True}))
    assert reply.body == {"ok": True} and reply.latency_s >= 0


def test_the_timeout_and_headers_reach_the_request() -> None:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json={})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    arun(get_json(client, "http://model.test/props", headers={"X-Probe": "1"}, deadline_s=3.5))
    assert seen[0].method == "GET" and seen[0].headers["x-probe"] == "1"
    assert seen[0].extensions["timeout"] == {"connect": 3.5, "read": 3.5, "write": 3.5, "pool": 3.5}


def test_transport_errors_name_the_url_without_its_credentials() -> None:
    server = MockServer({"POST /v1/chat/completions": [httpx.ConnectError]})
    url = "http://admin:hunter2@model.test:8080/v1/chat/completions"
    with pytest.raises(BackendError) as info:
        arun(post_json(server.client(), url, {}))
    assert "hunter2" not in str(info.value) and "http://model.test:8080/v1/chat/completions" in str(info.value)


def test_url_helpers() -> None:
    assert public_url("https://u:p@host.test:8443/v1?x=1") == "https://host.test:8443/v1?x=1"
    assert public_url("http://host.test/v1") == "http://host.test/v1"
    assert join_url("http://h/v1/", "/models") == "http://h/v1/models"
    assert [
        is_loopback(u)
        for u in ("http://localhost:1", "http://127.0.0.5", "http://[::1]:8", "http://10.0.0.1", "http://example.com")
    ] == [True, True, True, False, False]
    assert redact("a KEY9 b KEY9", ["KEY9", None, ""]) == "a [redacted] b [redacted]"


# -- request rules and normalisation ------------------------------------------------------------------


GRAMMAR = Constraint(kind="grammar", grammar='root ::= "x"')


def test_a_constraint_the_backend_lacks_is_unsupported_unless_optional() -> None:
    with pytest.raises(UnsupportedFeature, match="feature 'grammar'"):
        settle_constraint(request(constraint=GRAMMAR), backend="b", kinds={"json_schema"})
    optional = GRAMMAR.model_copy(update={"optional": True})
    assert settle_constraint(request(constraint=optional), backend="b", kinds={"json_schema"}) == (None, True)
    assert settle_constraint(request(constraint=GRAMMAR), backend="b", kinds={"grammar"}) == (GRAMMAR, False)


def test_an_exclusive_constraint_beside_callable_tools_is_unsupported() -> None:
    with pytest.raises(UnsupportedFeature, match="grammar_with_tools"):
        settle_constraint(request(constraint=GRAMMAR), backend="b", kinds={"grammar"}, exclusive_with_tools=True)
    # tools that may not be called, or no tools at all, leave the grammar usable
    assert settle_constraint(
        request(constraint=GRAMMAR, tool_choice="none"), backend="b", kinds={"grammar"}, exclusive_with_tools=True
    ) == (GRAMMAR, False)
    assert settle_constraint(
        request(constraint=GRAMMAR, tools=[]), backend="b", kinds={"grammar"}, exclusive_with_tools=True
    ) == (GRAMMAR, False)


def test_constraint_body_refuses_an_empty_constraint() -> None:
    assert constraint_body(GRAMMAR) == 'root ::= "x"'
    with pytest.raises(BackendError, match="without its json_schema"):
        constraint_body(Constraint(kind="json_schema"))


def test_tool_choice_is_dropped_without_tools_and_unsupported_when_missing() -> None:
    assert check_tool_choice(request(tool_choice="required", tools=[]), backend="b", allowed={"auto"}) is None
    assert check_tool_choice(request(), backend="b", allowed={"auto"}) is None
    with pytest.raises(UnsupportedFeature, match="feature 'tool_choice_required'"):
        check_tool_choice(request(tool_choice="required"), backend="b", allowed={"auto"})


@pytest.mark.parametrize(
    ("reason", "normal"),
    [
        ("stop", "stop"),
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("length", "length"),
        ("max_tokens", "length"),
        ("tool_calls", "tool_calls"),
        ("tool_use", "tool_calls"),
        ("tool", "tool_calls"),
        ("refusal", "refusal"),
        ("load", "load"),
        (None, "unknown"),
        ("", "unknown"),
        (3, "unknown"),
    ],
)
def test_finish_reasons_are_normalised_to_the_openai_vocabulary(reason: object, normal: str) -> None:
    assert normalise_finish(reason) == normal


@pytest.mark.parametrize(
    ("raw", "arguments", "kept", "error"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}, None, None),
        ({"city": "Paris"}, {"city": "Paris"}, None, None),
        ("", {}, None, None),
        (None, {}, None, None),
        ('{"city": "Paris"', None, '{"city": "Paris"', "invalid JSON"),
        ('["Paris"]', None, '["Paris"]', "JSON list"),
        (["Paris"], None, '["Paris"]', "JSON list"),  # an object-dialect backend sending a list
        (42, None, "42", "JSON int"),
    ],
)
def test_tool_call_arguments_that_do_not_parse_are_kept_and_flagged(
    raw: object, arguments: Any, kept: Any, error: str | None
) -> None:
    call = tool_call("id1", "get_weather", raw)
    assert (call.id, call.name, call.arguments, call.raw_arguments) == ("id1", "get_weather", arguments, kept)
    assert call.malformed is (arguments is None)
    assert (call.parse_error is None) if error is None else (error in (call.parse_error or ""))


# -- the retry policy ---------------------------------------------------------------------------------


class Flaky:
    """Fails with the given errors, then answers."""

    def __init__(self, *errors: BackendError):
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "answer"


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


class Ceiling(random.Random):
    """Jitter that always draws the top of its range, to read the backoff's bound."""

    def uniform(self, a: float, b: float) -> float:
        return b


RETRYABLE = BackendError("HTTP 503", retryable=True, status=503)


def test_backoff_bound_doubles_up_to_the_cap() -> None:
    policy = RetryPolicy(attempts=8, base_delay_s=0.5, max_delay_s=3.0)
    assert [policy.delay(i, Ceiling()) for i in range(6)] == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_jitter_is_full_and_within_the_bound() -> None:
    policy = RetryPolicy(attempts=8, base_delay_s=1.0, max_delay_s=4.0)
    rng = random.Random(7)
    delays = [policy.delay(2, rng) for _ in range(200)]
    assert all(0 <= d <= 4.0 for d in delays)
    assert min(delays) < 0.5 and max(delays) > 3.5 and len(set(delays)) == 200  # spread, not a fixed step


def test_retryable_errors_are_retried_with_injected_sleep_and_jitter() -> None:
    flaky, sleeps = Flaky(RETRYABLE, RETRYABLE), Sleeps()
    policy = RetryPolicy(attempts=4, base_delay_s=0.25, max_delay_s=8.0)
    result = arun(call_with_retries(flaky, policy, rng=Ceiling(), sleep=sleeps))
    assert result == ("answer", 2) and flaky.calls == 3
    assert sleeps.delays == [0.25, 0.5]


def test_the_same_rng_seed_gives_the_same_jittered_delays() -> None:
    def delays(seed: int) -> list[float]:
        sleeps = Sleeps()
        arun(
            call_with_retries(
                Flaky(RETRYABLE, RETRYABLE, RETRYABLE), RetryPolicy(), rng=random.Random(seed), sleep=sleeps
            )
        )
        return sleeps.delays

    assert delays(3) == delays(3) != delays(4)
    assert all(0 <= d <= b for d, b in zip(delays(3), [0.5, 1.0, 2.0], strict=True))


def test_attempts_are_bounded_and_the_last_error_propagates() -> None:
    last = BackendError("HTTP 502 (the last one)", retryable=True, status=502)
    flaky, sleeps = Flaky(RETRYABLE, RETRYABLE, last, RETRYABLE), Sleeps()
    with pytest.raises(BackendError) as info:
        arun(call_with_retries(flaky, RetryPolicy(attempts=3), sleep=sleeps))
    assert info.value is last and flaky.calls == 3 and len(sleeps.delays) == 2


@pytest.mark.parametrize(
    "error", [BackendError("HTTP 400", retryable=False, status=400), UnsupportedFeature("no grammar")]
)
def test_non_retryable_errors_are_raised_at_once(error: BackendError) -> None:
    flaky, sleeps = Flaky(error), Sleeps()
    with pytest.raises(BackendError) as info:
        arun(call_with_retries(flaky, RetryPolicy(attempts=5), sleep=sleeps))
    assert info.value is error and flaky.calls == 1 and sleeps.delays == []


# -- the response size cap --------------------------------------------------------------------------

_ROUTES = {
    "openai": "POST /v1/chat/completions",
    "llama-server": "POST /v1/chat/completions",
    "ollama": "POST /api/chat",
    "anthropic": "POST /v1/messages",
}


def _huge(size: int) -> Step:
    return lambda req: httpx.Response(200, json={"text": "x" * size})


@pytest.mark.parametrize("kind", sorted(_ROUTES))
def test_every_http_backend_caps_the_answer_at_its_entrys_max_response_bytes(kind: str) -> None:
    from evalkit.backends import create_backend

    server = MockServer({_ROUTES[kind]: [_huge(20_000)]})
    backend = create_backend(
        entry(kind, url="http://model.test/v1" if kind == "openai" else "http://model.test", max_response_bytes=10_000),
        server.client(),
    )
    with pytest.raises(BackendError) as caught:
        arun(backend.complete(request(), CONTEXT))
    assert not caught.value.retryable and "exceeds max_response_bytes (10,000 bytes)" in str(caught.value)


def test_the_default_cap_is_8_mib_and_a_larger_declared_body_is_refused_before_it_is_read() -> None:
    from evalkit.backends.entry import BackendEntry

    assert BackendEntry(label="a", kind="openai", model="m").max_response_bytes == 8 * 1024 * 1024
    nine_mb = 9 * 1024 * 1024
    error = post_error(lambda req: httpx.Response(200, json={"text": "x" * nine_mb}))
    assert "Content-Length" in str(error) and "8,388,608" in str(error)


def test_a_gzip_bomb_through_the_mock_transport_is_an_error_not_an_allocation() -> None:
    import gzip

    bomb = gzip.compress(b'{"a": "' + b"0" * 40_000_000 + b'"}')
    error = post_error(lambda req: httpx.Response(200, content=bomb, headers={"content-encoding": "gzip"}))
    assert "decoded body exceeds max_response_bytes" in str(error)
