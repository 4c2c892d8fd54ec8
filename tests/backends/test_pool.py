"""Several endpoints behind one backend entry: balancing, slots from /props, dead servers out of rotation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from evalkit.backends import create_backend
from evalkit.backends.entry import BackendEntry
from evalkit.backends.pool import MAX_FAULTS, PoolBackend
from evalkit.errors import BackendError, ConfigError
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from tests.backends import CONTEXT, NO_WAIT, arun, payload, request
from tests.run.test_runner import SCENARIOS
from tests.stub_server import chat_stubs


class Hosts:
    """A MockTransport handler for several hosts: each answers from its own llama-server script."""

    def __init__(self, **hosts: str) -> None:
        self.behaviour = dict(hosts)  # host -> "serve" | "refuse" | "fail" | "unauthorized"
        self.chats: dict[str, int] = dict.fromkeys(hosts, 0)

    def handle(self, req: httpx.Request) -> httpx.Response:
        host = req.url.host
        if self.behaviour[host] == "refuse":
            raise httpx.ConnectError("connection refused", request=req)
        if req.url.path == "/health":
            return httpx.Response(200, json=payload("llama_server", "health_ok"))
        if req.url.path == "/props":
            return httpx.Response(200, json={**payload("llama_server", "props"), "total_slots": 3})
        self.chats[host] += 1
        if self.behaviour[host] == "fail":
            return httpx.Response(503, json=payload("llama_server", "error_slots_busy"))
        if self.behaviour[host] == "unauthorized":
            return httpx.Response(401, json={"error": {"code": 401, "message": "Invalid API Key"}})
        return httpx.Response(200, json=payload("llama_server", "chat_text"))

    def pool(self, **extra: Any) -> PoolBackend:
        entry = BackendEntry(
            label="pool",
            kind="llama-server",
            model="m",
            retry=NO_WAIT,
            urls=[f"http://{h}:8080" for h in self.behaviour],
            **extra,
        )
        backend = create_backend(entry, httpx.AsyncClient(transport=httpx.MockTransport(self.handle)))
        assert isinstance(backend, PoolBackend)
        return backend


def test_a_refusing_endpoint_leaves_the_rotation_and_its_calls_go_elsewhere() -> None:
    hosts = Hosts(a="serve", b="refuse")
    pool = hosts.pool()
    info = arun(pool.describe())
    assert [(e["url"], e["up"], e["concurrency"]) for e in info["endpoints"]] == [
        ("http://a:8080", True, 3),
        ("http://b:8080", False, 4),
    ]  # slots from /props; b: the entry's default
    assert pool.capacity == 3

    async def calls() -> None:
        await asyncio.gather(
            *(pool.complete(request(), CONTEXT.model_copy(update={"run_id": f"r{i}"})) for i in range(10))
        )

    arun(calls())
    assert hosts.chats == {"a": 10, "b": 0}


def test_calls_are_balanced_and_a_failing_endpoint_is_dropped_after_repeated_faults() -> None:
    hosts = Hosts(a="serve", b="serve")
    pool = hosts.pool()
    arun(pool.describe())

    async def burst(n: int) -> None:
        await asyncio.gather(
            *(pool.complete(request(), CONTEXT.model_copy(update={"run_id": f"r{i}"})) for i in range(n))
        )

    arun(burst(6))  # six at once, three slots each: both servers fill
    assert hosts.chats == {"a": 3, "b": 3}
    hosts.behaviour["b"] = "fail"
    arun(burst(12))
    assert pool.endpoints[1].down is not None and hosts.chats["b"] - 3 == MAX_FAULTS
    assert hosts.chats["a"] == 3 + 12  # every call still answered, by a


def test_every_endpoint_down_is_a_backend_error() -> None:
    pool = Hosts(a="refuse", b="refuse").pool()
    with pytest.raises(BackendError, match="no endpoint of m is reachable"):
        arun(pool.describe())
    with pytest.raises(BackendError, match="down"):
        arun(pool.complete(request(), CONTEXT))


def test_an_entry_names_its_servers_one_way_only() -> None:
    with pytest.raises(ValueError, match="url and urls"):
        BackendEntry(label="x", kind="openai", model="m", url="http://a", urls=["http://b"])
    explicit = BackendEntry(label="x", kind="openai", model="m", endpoints=[{"url": "http://a", "concurrency": 2}])
    assert [(e.url, e.concurrency) for e in explicit.endpoint_list()] == [("http://a", 2)]
    with pytest.raises(ValueError, match="unknown backend kind 'nope'"):  # refused before any run
        BackendEntry(label="x", kind="nope", model="m", urls=["http://a"])
    with pytest.raises(ConfigError):  # and by the pool, for an entry built without validation
        create_backend(
            BackendEntry.model_construct(label="x", kind="nope", model="m", urls=["http://a"]), httpx.AsyncClient()
        )


@pytest.fixture
def stubs() -> Iterator[list[ThreadingHTTPServer]]:
    with chat_stubs(2) as servers:
        yield servers


def test_a_run_over_two_live_servers_and_a_dead_one_loses_no_run(tmp_path, stubs) -> None:
    urls = ["http://127.0.0.1:9/v1"] + [f"http://127.0.0.1:{s.server_address[1]}/v1" for s in stubs]
    config = RunConfig.model_validate(
        {
            "name": "pool",
            "runs": 6,
            "scenarios": [SCENARIOS],
            "families": ["casual_greeting"],
            "backends": [
                {
                    "label": "stubs",
                    "kind": "openai",
                    "model": "m",
                    "concurrency": 2,
                    "retry": NO_WAIT,
                    "endpoints": [{"url": u} for u in urls],
                }
            ],
            "strategies": {"trust_text": ["trust_text"]},
        }
    )
    results = load_results([run_config(config, tmp_path / "r.jsonl")])
    assert results.runs and all(r.outcome != "infra_error" for r in results.runs)
    assert all(s.hits > 0 for s in stubs)  # balanced over both live servers
    endpoints = results.headers[0].backends["stubs"]["endpoints"]
    assert [(e["url"], e["concurrency"]) for e in endpoints] == [(u, 2) for u in urls]


def test_a_replayed_pool_entry_reads_one_recording_directory(tmp_path) -> None:
    config = RunConfig.model_validate(
        {
            "name": "p",
            "scenarios": [SCENARIOS],
            "strategies": {"t": ["trust_text"]},
            "backends": [{"label": "pool", "kind": "openai", "model": "m", "urls": ["http://a/v1", "http://b/v1"]}],
        }
    )
    (entry,) = config.as_replay(tmp_path).backends
    assert entry.endpoint_list() == [] and entry.options == {"dir": str(tmp_path / "pool")}


def test_a_run_stays_on_the_server_that_holds_its_prompt_cache() -> None:
    hosts = Hosts(a="serve", b="serve")
    pool = hosts.pool()
    arun(pool.describe())
    for _ in range(4):  # one run's calls, one after another: round robin would alternate a, b, a, b
        arun(pool.complete(request(), CONTEXT))
    assert sorted(hosts.chats.values()) == [0, 4]
    arun(pool.complete(request(), CONTEXT.model_copy(update={"run_id": "another"})))
    assert sorted(hosts.chats.values()) == [1, 4]  # a new run goes to the server that has served least


def test_an_endpoint_refusing_the_credentials_stops_the_pool_instead_of_spreading_infra_errors() -> None:
    from evalkit.errors import BackendUnusable

    hosts = Hosts(a="serve", b="serve")
    pool = hosts.pool()
    arun(pool.describe())
    hosts.behaviour["b"] = "unauthorized"
    seen: list[BaseException | object] = []

    async def calls() -> None:
        seen.extend(
            await asyncio.gather(
                *(pool.complete(request(), CONTEXT.model_copy(update={"run_id": f"r{i}"})) for i in range(6)),
                return_exceptions=True,
            )
        )

    arun(calls())
    refused = [e for e in seen if isinstance(e, BackendError)]
    assert refused and all(isinstance(e, BackendUnusable) and e.status == 401 for e in refused)
    assert "http://b:8080" in str(refused[0]) and "refused the credentials" in str(refused[0])
    assert pool.endpoints[1].down is not None


def test_a_run_over_a_pool_with_one_endpoint_answering_401_stops_with_exit_3(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from evalkit.cli import main
    from tests.faultserver import FaultServer

    with FaultServer(["ok"]) as good, FaultServer(["401"]) as bad:
        config = {
            "name": "pool-401",
            "runs": 10,
            "scenarios": [SCENARIOS],
            "families": ["casual_greeting"],
            "backends": [
                {
                    "label": "pool",
                    "kind": "openai",
                    "model": "fault",
                    "concurrency": 2,
                    "retry": {"attempts": 2, "base_delay_s": 0, "max_delay_s": 0},
                    "endpoints": [{"url": good.url + "/v1"}, {"url": bad.url + "/v1"}],
                }
            ],
            "strategies": {"trust_text": ["trust_text"]},
        }
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        code = main(["run", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "r.jsonl"), "--no-progress"])
    assert code == 3
    assert "refused the credentials (HTTP 401)" in capsys.readouterr().err
