"""`KeepAliveTransport`, the lean `http://` path, held against httpx's own transport (httpcore) as the reference.

Every fault kind of tests/faultserver.py goes through `post_json` twice, once on a plain
`httpx.AsyncClient` and once on the runner's `pooled_client`; the answer, or the error's class
(retryable, status, exception type), must be the same. The response parser is checked on every
framing (Content-Length, chunked, to the end of the connection) with bodies and split points drawn
by hypothesis, and on every truncation of a framed answer: it returns the body sent, or an error,
never a shorter body.
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
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.backends._http import pooled_client, post_json
from evalkit.backends._keepalive import KeepAliveTransport, _Stale, read_response
from evalkit.errors import BackendError
from tests.backends import arun
from tests.faultserver import KINDS, FaultServer

KEY = "sk-keepalive-5f1e"
REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


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


def test_https_and_streamed_bodies_go_to_the_fallback_transport() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={})

    async def go() -> None:
        client = httpx.AsyncClient(transport=KeepAliveTransport(httpx.MockTransport(handler), max_idle=1))
        await client.post("https://api.example.test/v1/x", json={})

        async def chunks():  # type: ignore[no-untyped-def]
            yield b"{}"

        await client.post("http://127.0.0.1:9/streamed", content=chunks())
        await client.aclose()

    arun(go())
    assert seen == ["https://api.example.test/v1/x", "http://127.0.0.1:9/streamed"]


# -- the parser, on every framing and every cut ------------------------------------------------------


def _frame(body: bytes, framing: str, cuts: list[int], header_case: bool) -> bytes:
    name = b"CONTENT-LENGTH" if header_case else b"content-length"
    if framing == "length":
        return b"HTTP/1.1 200 OK\r\n%s: %d\r\nX-A:  b \r\n\r\n%s" % (name, len(body), body)
    if framing == "close":
        return b"HTTP/1.1 200 OK\r\nX-A: b\r\n\r\n" + body
    pieces, start = [], 0
    for cut in sorted({c % (len(body) + 1) for c in cuts} | {len(body)}):
        if cut > start:
            pieces.append(b"%x;ext=1\r\n%s\r\n" % (cut - start, body[start:cut]))
            start = cut
    encoding = b"Transfer-Encoding" if header_case else b"transfer-encoding"
    return b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n%s: chunked\r\n\r\n%s0\r\nX-Trailer: t\r\n\r\n" % (
        encoding,
        b"".join(pieces),
    )


async def _parse(raw: bytes, feed_sizes: list[int]) -> tuple[int, bytes, bool]:
    reader = asyncio.StreamReader()

    async def feed() -> None:
        at = 0
        for size in feed_sizes:
            reader.feed_data(raw[at : at + size])
            at += size
            await asyncio.sleep(0)
        reader.feed_data(raw[at:])
        reader.feed_eof()

    feeding = asyncio.ensure_future(feed())
    status, _, body, keep = await read_response(reader, REQUEST)
    await feeding
    return status, body, keep


FRAMINGS = st.sampled_from(["length", "chunked", "close"])


@settings(max_examples=150, deadline=None)
@given(
    body=st.binary(max_size=300),
    framing=FRAMINGS,
    cuts=st.lists(st.integers(0, 400), max_size=6),
    feed_sizes=st.lists(st.integers(1, 50), max_size=10),
    header_case=st.booleans(),
)
def test_every_framing_gives_back_the_body_sent(
    body: bytes, framing: str, cuts: list[int], feed_sizes: list[int], header_case: bool
) -> None:
    status, parsed, keep = asyncio.run(_parse(_frame(body, framing, cuts, header_case), feed_sizes))
    assert (status, parsed) == (200, body)
    assert keep is (framing != "close")


@settings(max_examples=150, deadline=None)
@given(
    body=st.binary(min_size=1, max_size=200),
    framing=st.sampled_from(["length", "chunked"]),
    cuts=st.lists(st.integers(0, 300), max_size=4),
    at=st.floats(0, 1, exclude_max=True),
)
def test_an_answer_cut_anywhere_is_an_error_never_a_shorter_body(
    body: bytes, framing: str, cuts: list[int], at: float
) -> None:
    raw = _frame(body, framing, cuts, False)
    with pytest.raises((httpx.RemoteProtocolError, _Stale)):
        asyncio.run(_parse(raw[: int(len(raw) * at)], []))


@pytest.mark.parametrize(
    "raw",
    [
        b"<html>hello</html>\r\n\r\n",  # not HTTP at all
        b"HTTP/1.1 abc OK\r\n\r\n",  # no status code
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",  # a header line without a name
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",  # a length that is not a number
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # a chunk size that is not hex
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",  # a chunk longer than said
    ],
)
def test_a_malformed_answer_is_a_protocol_error(raw: bytes) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        asyncio.run(_parse(raw, []))


def test_connection_close_and_http_1_0_are_not_kept_and_204_has_no_body() -> None:
    close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    old_kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}"
    empty = b"HTTP/1.1 204 No Content\r\n\r\n"
    assert asyncio.run(_parse(close, [])) == (200, b"{}", False)
    assert asyncio.run(_parse(old, [])) == (200, b"{}", False)
    assert asyncio.run(_parse(old_kept, [])) == (200, b"{}", True)
    assert asyncio.run(_parse(empty, [])) == (204, b"", True)


def test_the_json_a_backend_reads_is_the_same_on_both_paths() -> None:
    async def fetch(client: httpx.AsyncClient, url: str) -> object:
        body = (await post_json(client, url, {"seed": 3})).body
        await client.aclose()
        return body

    with FaultServer(["echo"], key=KEY) as server:
        url = server.url + "/v1/chat/completions"
        assert arun(fetch(pooled_client(2, 2), url)) == arun(fetch(httpx.AsyncClient(), url))
        assert json.dumps(arun(fetch(pooled_client(2, 2), url))).count(KEY) == 1  # no secrets passed: kept
