"""Simulated results from a known profile: a fit must find that profile again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from evalkit.scenario.model import Scenario, load_scenarios

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [ROOT / "scenarios/sequential_reasoning/weather_trip.yaml", ROOT / "scenarios/casual_greeting/hi.yaml"]
KNOWN: dict[str, Any] = {
    "name": "known",
    "tool_step": {
        "correct": 0.5,
        "text_instead_of_tool": 0.2,
        "malformed_call": 0.1,
        "hallucinated_tool": 0.1,
        "wrong_arguments": 0.0,
        "premature_answer": 0.0,
        "call_as_text": 0.1,
    },
    "reply_step": {"unneeded_tool_call": 0.3, "uses_respond": 0.0},
    "after_nudge": {"tool_step_correct": 0.7, "reply_step_tool_call": 0.4, "uses_respond": 0.0},
}


def simulated_results(folder: Path, profile: dict[str, Any], runs: int = 40) -> Path:
    path = folder / "known.yaml"
    path.write_text(yaml.safe_dump(profile))
    config = RunConfig.model_validate(
        {
            "name": "known",
            "seed": 5,
            "runs": runs,
            "scenarios": [str(s) for s in SCENARIOS],
            "backends": [{"label": "s", "kind": "sim", "model": str(path)}],
            "strategies": {"trust_text": ["trust_text"], "retry_nudge": ["retry_nudge"]},
        }
    )
    return run_config(config, folder / "known.jsonl")


@pytest.fixture(scope="session")
def known_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_results(tmp_path_factory.mktemp("known"), KNOWN)


@pytest.fixture(scope="session")
def scenarios() -> list[Scenario]:
    return load_scenarios(SCENARIOS)
