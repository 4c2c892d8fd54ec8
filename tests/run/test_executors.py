"""Executors: Ray workers run shards of the plan and the driver writes; the records equal a local run's.

The Ray tests start a local Ray instance (2 CPUs) and skip when Ray is not installed
(`pip install 'evalkit[ray]'`; `.ci/run` installs it).
"""

from __future__ import annotations

from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from evalkit.errors import ConfigError, ResultsError
from evalkit.results.merge import merge_results
from evalkit.results.reader import load_results
from evalkit.results.shards import Shard
from evalkit.run.executors import create_executor
from evalkit.run.executors.local import LocalExecutor
from evalkit.run.runner import run_config
from tests.extras import needs_extra
from tests.results.test_shards import decided
from tests.run.test_runner import config
from tests.stub_server import chat_stubs


def test_executor_options_are_checked() -> None:
    assert isinstance(create_executor("local"), LocalExecutor)
    with pytest.raises(ConfigError, match="--executor ray"):
        create_executor("local", workers=2)
    with pytest.raises(ConfigError, match="unknown"):
        create_executor("spark")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[object]:
    ray = pytest.importorskip("ray", reason=needs_extra("ray"))

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_ray_run_writes_the_records_of_a_local_run(tmp_path, ray_local) -> None:
    local = load_results([run_config(config(), tmp_path / "local.jsonl")])
    out = run_config(config(), tmp_path / "ray.jsonl", executor=create_executor("ray", workers=2))
    remote = load_results([out])
    assert decided(remote.runs) == decided(local.runs)
    workers = remote.headers[0].backends["sim"]["ray_workers"]
    assert len(workers) == 2 and remote.headers[0].simulated
    assert [f.status for f in remote.footers] == ["complete"]


def test_a_ray_run_resumes_and_shards_like_a_local_one(tmp_path, ray_local) -> None:
    ray = create_executor("ray", workers=2)
    out = tmp_path / "cut.jsonl"
    run_config(config(), out, shard=Shard(1, 2), executor=ray)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:6]))  # the header and five runs survive an interruption
    run_config(config(), out, resume=True, shard=Shard(1, 2), executor=ray)
    local = run_config(config(), tmp_path / "local.jsonl", shard=Shard(1, 2))
    assert decided(load_results([out]).runs) == decided(load_results([local]).runs)
    with pytest.raises(ConfigError, match="--record"):
        run_config(config(), tmp_path / "rec.jsonl", executor=ray, record_dir=tmp_path / "rec")
    with pytest.raises(ResultsError, match="--resume"):
        run_config(config(), out, executor=ray)


@pytest.fixture
def stubs() -> Iterator[list[ThreadingHTTPServer]]:
    with chat_stubs(2) as servers:
        yield servers


def test_ray_workers_reach_http_servers_through_an_endpoint_pool(tmp_path, ray_local, stubs) -> None:
    urls = [f"http://127.0.0.1:{s.server_address[1]}/v1" for s in stubs]
    cfg = config(
        runs=4,
        families=["casual_greeting"],
        strategies={"trust_text": ["trust_text"]},
        backends=[{"label": "stubs", "kind": "openai", "model": "m", "concurrency": 2, "urls": urls}],
    )
    local = load_results([run_config(cfg, tmp_path / "local.jsonl")])
    calls_local = sum(s.hits for s in stubs)
    remote = load_results([run_config(cfg, tmp_path / "ray.jsonl", executor=create_executor("ray", workers=2))])
    assert decided(remote.runs) == decided(local.runs) and not remote.simulated
    assert sum(s.hits for s in stubs) == 2 * calls_local  # the workers sent the same calls again
    assert [len(w["endpoints"]) for w in remote.headers[0].backends["stubs"]["ray_workers"]] == [2, 2]


def test_an_evalkit_error_on_a_worker_reaches_the_driver_as_itself(tmp_path, ray_local) -> None:
    # only a worker starts the server it serves, so only the worker finds the model unknown
    broken = config(backends=[{"label": "x", "kind": "llama-server", "model": "no-such-model", "serve": {}}])
    with pytest.raises(ConfigError, match="unknown model 'no-such-model'"):
        run_config(broken, tmp_path / "r.jsonl", executor=create_executor("ray", workers=1))


def test_a_ray_shard_and_a_local_shard_merge_into_the_local_run(tmp_path, ray_local) -> None:
    on_ray = run_config(config(), tmp_path / "a.jsonl", shard=Shard(1, 2), executor=create_executor("ray", workers=2))
    here = run_config(config(), tmp_path / "b.jsonl", shard=Shard(2, 2))
    assert merge_results([on_ray, here], tmp_path / "all.jsonl").missing == []
    whole = load_results([run_config(config(), tmp_path / "whole.jsonl")])
    assert decided(load_results([tmp_path / "all.jsonl"]).runs) == decided(whole.runs)
