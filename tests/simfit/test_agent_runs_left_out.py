"""A fit replays evalkit's own loop's runs with their strategy stacks. An agent column's runs on the
real model (results/agents-smollm2.jsonl) have no stack: the agent's loop made their requests. They
are left out of the fit, and a results file holding them is read without an error."""

from __future__ import annotations

from pathlib import Path

from evalkit.scenario.model import load_scenarios
from evalkit.simfit.classify import classify_files

ROOT = Path(__file__).resolve().parents[2]


def test_an_agent_columns_runs_are_left_out_of_a_fit() -> None:
    scenarios = load_scenarios(sorted((ROOT / "scenarios").rglob("*.yaml")))
    found = classify_files([ROOT / "results/agents-smollm2.jsonl"], "smollm2", scenarios)
    assert (found.runs, found.observations, found.cells) == (0, [], {})
    assert [name for name, _ in found.sources] == ["agents-smollm2.jsonl"]
