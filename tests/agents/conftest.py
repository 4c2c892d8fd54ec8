"""Configs that run the standard-library fake agent (tests/agents/fake_agent.py) on ADR-013's scenarios."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_agent.py")
ADR013 = [
    "scenarios/sequential_reasoning/medication_chain.yaml",
    "scenarios/adr013/relevance_decline.yaml",
    "scenarios/data_gap_recovery/hr_profile.yaml",
    "scenarios/casual_greeting/hi.yaml",
]

MakeConfig = Callable[..., Path]


@pytest.fixture
def agent_config(tmp_path: Path) -> MakeConfig:
    """A config file running `fake_agent.py ARGS...` (as agent `fake`), and optionally guard stacks."""

    def make(
        *args: str,
        runs: int = 1,
        scenarios: list[str] | None = None,
        extra: str = "",
        model: str = "small-local",
        strategies: str = "",
    ) -> Path:
        argv = ", ".join(f'"{a}"' for a in [sys.executable, str(FAKE), *args])
        paths = "\n".join(f"  - {ROOT / s}" for s in (scenarios or ADR013))
        text = (
            f"name: agents-test\nseed: 7\nruns: {runs}\nscenarios:\n{paths}\n"
            f"backends:\n  - {{label: sim, kind: sim, model: {model}, concurrency: 4}}\n"
            f"agents:\n  fake: {{command: [{argv}]{extra}}}\n{strategies}"
        )
        path = tmp_path / "agents.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return make
