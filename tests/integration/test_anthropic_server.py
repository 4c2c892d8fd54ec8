"""`kind: anthropic` against the real llama-server, which also speaks Anthropic's Messages API at
`/v1/messages`: the same two scenarios as the OpenAI-compatible end-to-end test, through the
Anthropic backend, scored like any other run.

Where the protocols differ (docs/protocols.md): Anthropic's API has no seed, so evalkit sends none and
runs do not repeat from a seed; a grammar cannot be sent, so grammar cells are `unsupported`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.backends.serve import LlamaServer
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.integration.conftest import MODEL
from tests.integration.test_end_to_end import CHAIN, GREETING

pytestmark = pytest.mark.server

STRATEGIES: dict[str, list[Any]] = {
    "trust_text": ["trust_text"],
    "respond_tool": [{"respond_tool": {"max_nudges": 1}}],
    "grammar": [{"respond_tool": {"max_nudges": 1}}, {"grammar": {"mode": "grammar"}}],
}


def test_a_scenario_runs_through_the_messages_api_of_the_real_server(llama_server: LlamaServer, tmp_path: Path) -> None:
    doc = {
        "name": "anthropic-e2e",
        "seed": 5,
        "runs": 1,
        "modes": ["native"],
        "scenarios": [str(GREETING), str(CHAIN)],
        "backends": [
            {
                "label": "smollm2-messages",
                "kind": "anthropic",
                "model": MODEL,
                "url": llama_server.url,
                "concurrency": 2,
                "retry": {"attempts": 2, "base_delay_s": 0.05, "max_delay_s": 0.1},
            }
        ],
        "strategies": STRATEGIES,
        "sampling": {"temperature": 0.7, "max_tokens": 64},
    }
    path = tmp_path / "anthropic.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    out, record = tmp_path / "r.jsonl", tmp_path / "rec"
    run_config(load_config(path), out, record_dir=record)
    results = load_results([out])
    runs = {r.run_id: r for r in results.runs}
    assert len(runs) == 2 * len(STRATEGIES)
    assert not [r.run_id for r in results.runs if r.outcome == "infra_error"], "every call reached the server"
    assert {i for i, r in runs.items() if r.outcome == "unsupported"} == {
        f"smollm2-messages/native/grammar/{s}/0" for s in ("e2e-hi", "e2e-weather")
    }
    for run in results.runs:
        if run.outcome != "unsupported":
            assert run.calls and run.usage.prompt_tokens > 0 and run.latency_s > 0
            assert run.completed is not None and run.correct is not None
    recorded = (record / "smollm2-messages" / "recordings.jsonl").read_text().splitlines()
    assert len(recorded) == sum(len(r.calls) for r in results.runs)
    assert results.headers[0].backends["smollm2-messages"]["kind"] == "anthropic"
