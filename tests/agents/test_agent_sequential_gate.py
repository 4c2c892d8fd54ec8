"""`evalkit gate --sequential` with an agent column: each batch runs the agent, and its cells are judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.agents.conftest import MakeConfig

HI = ["scenarios/casual_greeting/hi.yaml"]


def test_a_sequential_gate_catches_an_agent_that_started_to_loop(
    agent_config: MakeConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.jsonl"
    run_config(load_config(agent_config("loop", runs=10, scenarios=HI, model="strong")), baseline)
    candidate = agent_config("flood", scenarios=HI, model="strong", extra=", budget: 3")
    out = tmp_path / "batches"
    code = main(["gate", "--sequential", "--baseline", str(baseline), "--candidate", str(candidate), "--out", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1, lines
    assert lines[0].startswith("evalkit gate --sequential: FAIL: 1 of 1 cells regressed")
    (verdict,) = [line for line in lines if line.startswith(("FAIL ", "pass "))]
    assert verdict.startswith(
        "FAIL sim/native/fake/greet-hi: regression (interim) after 5 runs: 0/5 against the baseline's 10/10"
    )
    (batch,) = out.glob("batch-*.jsonl")  # decided in its first batch: no second one ran
    runs = load_results([batch]).runs
    assert [r.outcome for r in runs] == ["runaway"] * 5  # the agent's own loop, judged: not infra errors
