"""Several real llama-servers behind one backend entry: one dies mid-run and no run is lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from evalkit.backends.serve import LlamaServer
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.integration.conftest import MODEL, require_llama_server
from tests.integration.test_end_to_end import GREETING, _listening, _run_lines, write_config

pytestmark = pytest.mark.server

ONE = {"trust_text": ["trust_text"]}


def test_a_server_killed_mid_run_leaves_the_rotation_and_no_run_is_lost(tmp_path: Path) -> None:
    require_llama_server()
    with (
        LlamaServer(MODEL, parallel=1, ctx_size=2048, seed=1) as doomed,
        LlamaServer(MODEL, parallel=1, ctx_size=2048, seed=1) as survivor,
    ):
        config = write_config(
            tmp_path, {"urls": [doomed.url, survivor.url]}, name="pool", runs=4, strategies=ONE, scenarios=[GREETING]
        )
        out = tmp_path / "pool.jsonl"
        worker = threading.Thread(target=run_config, args=(load_config(config), out))
        worker.start()
        deadline = time.monotonic() + 300  # a guard, not a timing: the machine may be busy
        while time.monotonic() < deadline and _run_lines(out) < 2:
            time.sleep(0.05)
        assert _run_lines(out) >= 2, "no run finished against the live servers"
        doomed.stop(timeout_s=0)
        worker.join(timeout=600)
    assert not worker.is_alive()
    results = load_results([out])
    assert len(results.runs) == 8 and results.footers[-1].status == "complete"
    assert [r.run_id for r in results.runs if r.outcome == "infra_error"] == []
    endpoints = results.headers[0].backends["smollm2"]["endpoints"]
    assert [(e["url"], e["concurrency"]) for e in endpoints] == [(doomed.url, 1), (survivor.url, 1)]  # /props slots


def test_serve_replicas_start_a_pool_of_local_servers_and_stop_them(tmp_path: Path) -> None:
    require_llama_server()
    config = write_config(
        tmp_path,
        {"serve": {"parallel": 1, "ctx_size": 2048, "replicas": 2}},
        name="replicas",
        strategies=ONE,
        scenarios=[GREETING],
        runs=2,
    )
    out = tmp_path / "replicas.jsonl"
    run_config(load_config(config), out)
    results = load_results([out])
    described = results.headers[0].backends["smollm2"]
    assert len(described["endpoints"]) == 2 and len(described["started_by_evalkit"]) == 2
    assert [r.outcome for r in results.runs if r.outcome == "infra_error"] == [] and len(results.runs) == 4
    assert not any(_listening(int(e["url"].rsplit(":", 1)[1])) for e in described["endpoints"])
