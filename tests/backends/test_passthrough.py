"""The counting pass-through: tokens read from answers a model server wrote (untrusted bodies), streamed
calls counted, and answers bounded by `max_response_bytes` whatever their encoding."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import pytest

from evalkit.backends.passthrough import CountingPassThrough, ServedCount, answer_tokens
from evalkit.backends.sim_server import SimServer
from evalkit.scenario.model import load_scenario
from tests.backends.test_sim_stream import _requests, anthropic_body, openai_body
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("body", "stream", "tokens"),
    [
        (json.dumps({"usage": {"prompt_tokens": 12, "completion_tokens": 3}}).encode(), False, (12, 3)),
        (json.dumps({"usage": {"input_tokens": 7, "output_tokens": 2}}).encode(), False, (7, 2)),
        (json.dumps({"tokens_evaluated": 9, "tokens_predicted": 4}).encode(), False, (9, 4)),
        (json.dumps({"prompt_eval_count": 5, "eval_count": 1}).encode(), False, (5, 1)),
        (
            b'data: {"usage": {"prompt_tokens": 4, "completion_tokens": 1}}\ndata: {"usage": '
            b'{"prompt_tokens": 4, "completion_tokens": 6}}\ndata: [DONE]\n',
            True,
            (4, 6),
        ),
        (  # llama-server's streamed answer: `timings` on its last chunk, whether or not usage was asked for
            b'data: {"choices": []}\n\ndata: {"choices": [], "timings": {"cache_n": 20, "prompt_n": 10, '
            b'"predicted_n": 5}}\n\n',
            True,
            (30, 5),  # the prompt tokens its cache served count too, as in its `usage`
        ),
        (  # Anthropic's stream: the input in message_start, the output in message_delta
            b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tokens": 9, '
            b'"output_tokens": 0}}}\n\nevent: message_delta\ndata: {"type": "message_delta", "usage": '
            b'{"output_tokens": 4}}\n\n',
            True,
            (9, 4),
        ),
        (DEEP, False, (0, 0)),  # nested past any parser's depth
        (b"data: " + DEEP + b"\n", True, (0, 0)),
        (b'{"usage": {"prompt_tokens": [1], "completion_tokens": {"a": 1}}}', False, (0, 0)),
        (b'{"usage": {"prompt_tokens": 1e400, "completion_tokens": -3}}', False, (0, 0)),
        (b'{"usage": {"prompt_tokens": true, "completion_tokens": "12"}}', False, (0, 0)),
        (b'{"message": 5, "usage": null}', False, (0, 0)),
        (b"\xff\xfe not utf-8", False, (0, 0)),
    ],
)
def test_tokens_are_read_from_a_sane_answer_and_zero_from_a_hostile_one(
    body: bytes, stream: bool, tokens: tuple[int, int]
) -> None:
    assert answer_tokens(body, stream) == tokens


# -- streamed calls, and answers past the limit -------------------------------------------------------

WEATHER = ROOT / "tests/data/scenarios/e2e_weather.yaml"


async def _through(
    url: str, send: Callable[[str], Awaitable[list[Any]]], max_bytes: int = 1 << 20
) -> tuple[list[Any], ServedCount]:
    """`send(front)` against a pass-through in front of `url`, and what the pass-through counted."""
    async with aiohttp.ClientSession() as session:
        passthrough = CountingPassThrough(url, session, max_bytes)
        await passthrough.start()
        try:
            return await send(passthrough.url), passthrough.count
        finally:
            await passthrough.stop()


def test_a_streamed_call_is_counted_with_its_tokens_and_reaches_the_client_unchanged() -> None:
    scenario = load_scenario(WEATHER)
    request = next(_requests(scenario))
    chat, messages = openai_body(request, 3), anthropic_body(request)
    usage = {"stream_options": {"include_usage": True}}

    async def send(front: str) -> list[Any]:
        async with (
            openai.AsyncOpenAI(base_url=front + "/v1", api_key="sim", max_retries=0) as oa,
            anthropic.AsyncAnthropic(base_url=front, api_key="sim", max_retries=0) as an,
        ):
            async with oa.chat.completions.stream(**chat, **usage) as stream:
                counted = await stream.get_final_completion()
            async with oa.chat.completions.stream(**chat) as stream:  # no usage asked: none to count
                uncounted = await stream.get_final_completion()
            async with an.messages.stream(**messages, extra_headers={"X-Evalkit-Seed": "3"}) as events:
                message = await events.get_final_message()
        return [counted, uncounted, message]

    with sim_http(SimServer("small-local", [scenario])) as url:
        (counted, uncounted, message), count = asyncio.run(_through(url, send))
        direct, _, direct_message = asyncio.run(send(url))  # the same requests straight to the server
        assert counted.usage is not None and uncounted.usage is None
    assert counted.model_dump() == direct.model_dump() and message.model_dump() == direct_message.model_dump()
    assert (count.calls, count.errors, count.no_usage) == (3, 0, 1)
    assert count.prompt_tokens == counted.usage.prompt_tokens + message.usage.input_tokens
    assert count.completion_tokens == counted.usage.completion_tokens + message.usage.output_tokens


@pytest.mark.parametrize(("mode", "status"), [("stream", 200), ("gzip", 502), ("gzip-stream", 200)])
def test_an_answer_past_the_limit_is_cut_there_with_bounded_memory(mode: str, status: int) -> None:
    """Observed before: a 400 KB gzip answer took the pass-through to 1.29 GB. Here 200 MB inflated
    (or streamed) against a 4 MiB limit; the child's peak RSS may grow by far less than the answer."""
    limit = 4 * 1024 * 1024
    child = subprocess.run(
        [sys.executable, str(ROOT / "tests/passthrough_bomb.py"), mode, str(limit)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    seen = json.loads(child.stdout)
    assert seen["status"] == status
    assert (seen["count"]["calls"], seen["count"]["errors"]) == (1, 1)
    assert "passed max_response_bytes (4,194,304 bytes, decoded)" in seen["tail"]
    assert seen["got"] < limit + 70_000  # at most the chunk that was on its way, and the error
    assert seen["grown_mb"] < 64, seen["grown_mb"]  # the answer is 200 MB


def test_a_cut_stream_ends_in_an_error_the_sdks_raise() -> None:
    scenario = load_scenario(WEATHER)
    request = next(_requests(scenario))

    async def send(front: str) -> list[Any]:
        raised = []
        async with (
            openai.AsyncOpenAI(base_url=front + "/v1", api_key="sim", max_retries=0) as oa,
            anthropic.AsyncAnthropic(base_url=front, api_key="sim", max_retries=0) as an,
        ):
            with pytest.raises(openai.APIError, match="max_response_bytes") as cut:
                async with oa.chat.completions.stream(**openai_body(request, 3)) as stream:
                    await stream.get_final_completion()
            raised.append(cut.value)
            with pytest.raises(anthropic.APIStatusError, match="max_response_bytes") as also_cut:
                async with an.messages.stream(**anthropic_body(request)) as events:
                    await events.get_final_message()
            raised.append(also_cut.value)
        return raised

    with sim_http(SimServer("small-local", [scenario])) as url:
        _, count = asyncio.run(_through(url, send, max_bytes=400))  # each stream is longer than that
    assert (count.calls, count.errors) == (2, 2)
