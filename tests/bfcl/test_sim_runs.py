"""Imported scenarios run end to end on the simulated model (SIMULATED): a parallel case's reference
calls arrive in one reply, and the run ends after it (`end_after_calls`)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_strong_simulated_model_passes_imported_parallel_cases_in_one_reply(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "bfcl-sim",
                "seed": 3,
                "runs": 4,
                "families": ["tool_selection"],
                "modes": ["native"],
                "scenarios": [str(ROOT / "scenarios/bfcl/parallel/*.yaml")],
                "backends": [{"label": "sim", "kind": "sim", "model": "strong"}],
                "strategies": {"trust_text": ["trust_text"]},
            }
        )
    )
    out = tmp_path / "r.jsonl"
    assert main(["run", str(config), "-o", str(out)]) == 0
    runs = [r for r in map(json.loads, out.read_text().splitlines()) if r.get("type") == "run"]
    assert len(runs) == 40
    assert sum(r["correct"] for r in runs) >= 36
    for run in runs:
        assert run["model_calls"] == 1  # one reply: calls end the run, text answers the only turn
        if run["correct"]:
            assert len(run["calls"][0]["completion"]["tool_calls"]) >= 2
