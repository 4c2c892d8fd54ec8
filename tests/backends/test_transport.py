"""The runner's HTTP client (`pooled_client`, httpx on aiohttp's transport) held against httpx's own
transport (httpcore) as the reference, on real loopback servers.

Every fault kind of tests/faultserver.py goes through `post_json` twice, once on a plain
`httpx.AsyncClient` and once on `pooled_client`; the answer, or the error's class (retryable,
status, exception type), must be the same. Connections a server closes are dropped, never resent on,
and a body is capped after decompression while it streams in.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from evalkit.backends._http import pooled_client, post_json
from evalkit.errors import BackendError
from tests.backends import arun
from tests.faultserver import KINDS, FaultServer

KEY = "sk-transport-5f1e"


async def _outcome(client: httpx.AsyncClient, url: str) -> tuple[object, ...]:
    try:
        reply = await post_json(client, url, {"seed": 1, "messages": []}, deadline_s=0.6, secrets=[KEY])
    except BackendError as exc:
        kind = re.match(r"\S+", str(exc))
        return ("error", exc.retryable, exc.status, kind.group(0) if kind else "")
    finally:
        await client.aclose()
    return ("ok", reply.body)


@pytest.mark.parametrize("kind", KINDS)
def test_every_fault_kind_ends_as_it_does_on_httpx_own_transport(kind: str) -> None:
    outcomes = []
    for client in (httpx.AsyncClient(timeout=0.6), pooled_client(4, 0.6)):
        with FaultServer([kind], key=KEY, lifetime_s=10) as server:
            outcomes.append(arun(_outcome(client, server.url + "/v1/chat/completions")))
    reference, lean = outcomes
    assert lean == reference


def test_a_run_of_calls_reuses_one_connection_and_tolerates_each_kind_in_turn() -> None:
    async def calls(url: str) -> list[tuple[object, ...]]:
        client = pooled_client(1, 0.6)
        found = []
        for _ in range(len(order)):
            try:
                reply = await post_json(client, url, {"seed": 1}, deadline_s=0.6, secrets=[KEY])
                found.append(("ok", len(reply.body["choices"])))
            except BackendError as exc:
                found.append(("error", exc.retryable, exc.status))
        await client.aclose()
        return found

    order = [k for k in KINDS if k not in ("hang", "drip")]
    with FaultServer(order, key=KEY) as server:
        found = arun(calls(server.url + "/v1/chat/completions"))
    assert found[order.index("ok")] == ("ok", 1)
    assert found[order.index("503")] == ("error", True, 503)
    assert found[order.index("401")] == ("error", False, 401)
    assert found[order.index("reset")] == ("error", True, None)
    assert found[order.index("garbage")] == ("error", False, 200)
    assert found[-1] == ("ok", 0)  # after every fault, the connection (or a new one) still works: "empty"


# -- connections the server closes ------------------------------------------------------------------


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[bool]]


@contextlib.asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A server whose `handler(reader, writer, n)` answers the n-th request on a connection (or returns
    False to close it); yields its URL and, per request received, its index on its connection."""
    requests: list[int] = []
    writers: list[asyncio.StreamWriter] = []

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        n = 0
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            requests.append(n)
            if not await handler(reader, writer, n):
                break
            n += 1
        writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/x", requests
    finally:
        server.close()
        for writer in writers:
            writer.close()
        await asyncio.sleep(0.01)  # let the handlers see their connections end


def _answer(body: bytes, *headers: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (
        len(body),
        b"".join(h + b"\r\n" for h in headers),
        body,
    )


def test_a_kept_connection_the_server_closed_while_idle_is_dropped_before_reuse() -> None:
    async def then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(_answer(b'{"n": 1}'))  # keep-alive by HTTP/1.1 default, then an idle timeout closes it
        await writer.drain()
        return False

    async def go() -> list[int]:
        async with serving(then_close) as (url, requests):
            client = pooled_client(1, 2)
            for _ in range(3):
                assert (await client.post(url, json={})).json() == {"n": 1}
                await asyncio.sleep(0.05)  # the server's close reaches the client's socket
            await client.aclose()
        return requests

    assert arun(go()) == [0, 0, 0]  # three connections, each request sent once


@pytest.mark.parametrize("lean", [False, True])
def test_a_server_that_closes_as_a_request_arrives_is_a_retryable_error_and_no_resend(lean: bool) -> None:
    async def first_only(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        if n > 0:
            return False  # read the second request, then close without a byte
        writer.write(_answer(b'{"n": 1}'))
        await writer.drain()
        return True

    async def go() -> tuple[str, list[int]]:
        async with serving(first_only) as (url, requests):
            client = pooled_client(1, 2) if lean else httpx.AsyncClient(timeout=2)
            await post_json(client, url, {})
            with pytest.raises(BackendError) as caught:
                await post_json(client, url, {})
            await client.aclose()
        assert caught.value.retryable
        return str(caught.value).split(" ")[0], requests

    assert arun(go()) == ("RemoteProtocolError", [0, 1])


def test_a_fresh_connection_closed_without_an_answer_is_a_retryable_error_not_a_resend_loop() -> None:
    async def never(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        return False

    async def go() -> tuple[BackendError, list[int]]:
        async with serving(never) as (url, requests):
            client = pooled_client(1, 2)
            with pytest.raises(BackendError) as caught:
                await post_json(client, url, {})
            await client.aclose()
        return caught.value, requests

    error, requests = arun(go())
    assert error.retryable and "RemoteProtocolError" in str(error) and requests == [0]


def test_a_compressed_answer_is_decoded_by_the_client_above_the_transport() -> None:
    async def gzipped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(_answer(gzip.compress(b'{"zipped": true}'), b"Content-Encoding: gzip"))
        await writer.drain()
        return True

    async def go() -> object:
        async with serving(gzipped) as (url, _):
            client = pooled_client(1, 2)
            body = (await client.post(url, json={})).json()
            await client.aclose()
        return body

    assert arun(go()) == {"zipped": True}


def test_the_json_a_backend_reads_is_the_same_on_both_paths() -> None:
    async def fetch(client: httpx.AsyncClient, url: str) -> object:
        body = (await post_json(client, url, {"seed": 3})).body
        await client.aclose()
        return body

    with FaultServer(["echo"], key=KEY) as server:
        url = server.url + "/v1/chat/completions"
        assert arun(fetch(pooled_client(2, 2), url)) == arun(fetch(httpx.AsyncClient(), url))
        assert json.dumps(arun(fetch(pooled_client(2, 2), url))).count(KEY) == 1  # no secrets passed: kept


def test_the_runner_client_parses_http_with_aiohttp_not_a_hand_written_parser() -> None:
    from httpx_aiohttp import AiohttpTransport

    client = pooled_client(4, 2)
    assert isinstance(client._transport, AiohttpTransport)
    arun(client.aclose())


def _streamed(body: bytes, *headers: bytes) -> Handler:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(_answer(body, *headers))
        await writer.drain()
        return True

    return answer


def _post_capped(handler: Handler, max_bytes: int) -> BackendError:
    async def go() -> BackendError:
        async with serving(handler) as (url, _):
            client = pooled_client(1, 5)
            try:
                with pytest.raises(BackendError) as caught:
                    await post_json(client, url, {}, max_bytes=max_bytes)
            finally:
                await client.aclose()
        return caught.value

    return arun(go())


def test_a_body_past_the_cap_is_a_clear_non_retryable_error() -> None:
    big = json.dumps({"text": "x" * 300_000}).encode()
    error = _post_capped(_streamed(big), max_bytes=100_000)
    assert not error.retryable and "too large" in str(error) and "max_response_bytes (100,000 bytes)" in str(error)


def test_a_gzip_bomb_is_stopped_at_the_cap_after_decompression() -> None:
    bomb = gzip.compress(b'{"text": "' + b"0" * 50_000_000 + b'"}', compresslevel=9)  # 50 MB from ~50 KB
    assert len(bomb) < 100_000
    error = _post_capped(_streamed(bomb, b"Content-Encoding: gzip"), max_bytes=1_000_000)
    assert "too large" in str(error) and "decoded body" in str(error)
