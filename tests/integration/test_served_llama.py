"""A real chain: llama-server with SmolLM2 (started with --metrics) behind a guard proxy, each run's
served calls and tokens counted by evalkit's pass-through, and the totals held against llama-server's
own account: its Prometheus counters for the tokens and its log's tasks for the calls."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.backends.serve import LlamaServer
from evalkit.results.records import RunRecord
from evalkit.run.config import RunConfig, load_config
from evalkit.run.executors.local import LocalExecutor
from evalkit.run.matrix import iter_runs
from evalkit.run.preflight import config_scenarios
from tests.forge_env import forge_python
from tests.integration.conftest import require_llama_server

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "tests/stub_proxy.py"


def _proxy(kind: str) -> str:
    if kind == "stub":  # a proxy that sends every call to the model twice
        words = ["{python}", str(STUB), "--upstream", "{upstream}", "--port", "{port}", "--extra-calls", "1"]
        return f"        - name: stub\n          command: {json.dumps(words)}\n"
    words = ["-m", "forge.proxy", "--backend-url", "{upstream}", "--backend", "llamaserver", "--port", "{port}"]
    python = json.dumps(str(forge_python()))
    return f"        - name: forge\n          python: {python}\n          command: {json.dumps(words)}\n"


def _config(tmp_path: Path, kind: str) -> RunConfig:
    text = f"""name: served-{kind}
seed: 5
runs: 2
scenarios: [{json.dumps(str(ROOT / "tests/data/scenarios/e2e_hi.yaml"))}]
backends:
  - label: chain
    kind: llama-server
    model: smollm2
    concurrency: 2
    serve:
      phases:
        - llama_server: {{parallel: 2, ctx_size: 4096, seed: 1, metrics: true}}
{_proxy(kind)}strategies:
  trust_text: [trust_text]
  retry_nudge: [retry_nudge]
sampling: {{temperature: 0.7, max_tokens: 64}}
"""
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


async def _run(config: RunConfig) -> tuple[list[RunRecord], str, str, dict[str, Any]]:
    """The runs through the executor, then llama-server's metrics and log before the chain stops."""
    async with LocalExecutor().phase(config, config.backends, None) as phase:
        header = await phase.describe()
        pending = {"chain": iter_runs(config, config_scenarios(config))}
        records = [r async for r in phase.run(pending)]
        model = phase.pool.chains["chain"].served.model
        assert isinstance(model, LlamaServer)
        async with httpx.AsyncClient() as client:
            metrics = (await client.get(model.url + "/metrics")).text
        return records, metrics, model.log_path.read_text(encoding="utf-8", errors="replace"), header


def _metric(metrics: str, name: str) -> float:
    match = re.search(rf"^llamacpp:{name} (\S+)$", metrics, re.M)
    assert match, name
    return float(match.group(1))


@pytest.mark.parametrize("proxy", ["stub", "forge"])
def test_served_counts_agree_with_llama_servers_own(proxy: str, tmp_path: Path) -> None:
    require_llama_server()
    records, metrics, log, header = asyncio.run(_run(_config(tmp_path, proxy)))
    assert len(records) == 4
    served = [r.served for r in records]
    assert all(s is not None and s.errors == 0 for s in served)
    calls = sum(s.calls for s in served if s)
    assert calls == len(re.findall(r"launch_slot_: .* processing task", log))  # llama-server's tasks
    assert sum(s.completion_tokens for s in served if s) == _metric(metrics, "tokens_predicted_total")
    prompt = _metric(metrics, "prompt_tokens_total") + _metric(metrics, "prompt_tokens_cached_total")
    assert sum(s.prompt_tokens for s in served if s) == prompt
    if proxy == "stub":  # it calls the model twice for every call evalkit makes
        assert all(r.served and r.served.calls == 2 * r.model_calls for r in records)
    else:
        assert all(r.served and r.served.calls >= r.model_calls for r in records)
    phases = header["chain"]["started_by_evalkit"]["phases"]
    assert phases[0]["model"] == "smollm2" and "--metrics" in phases[0]["args"]
