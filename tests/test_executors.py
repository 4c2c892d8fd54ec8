"""Executors: Ray workers run shards of the plan and the driver writes; the records equal a local run's.

The Ray tests start a local Ray instance (2 CPUs) and skip when Ray is not installed
(`pip install 'evalkit[ray]'`; `.ci/run` installs it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalkit.errors import ConfigError, ResultsError
from evalkit.executors import create_executor
from evalkit.results import load_results
from evalkit.runner import LocalExecutor, run_config
from evalkit.shards import Shard
from tests.test_runner import config
from tests.test_shards import decided


def test_executor_options_are_checked() -> None:
    assert isinstance(create_executor("local"), LocalExecutor)
    with pytest.raises(ConfigError, match="--executor ray"):
        create_executor("local", workers=2)
    with pytest.raises(ConfigError, match="unknown"):
        create_executor("spark")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[object]:
    ray = pytest.importorskip("ray")
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
