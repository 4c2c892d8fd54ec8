"""The fit of the committed results (tests/test_regenerate.py holds the committed profiles to the fit)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_runs_behind_a_guard_proxy_are_not_the_models_own_calls() -> None:
    """configs/forge-smollm2.yaml reaches SmolLM2 directly (`direct`) and through Forge's proxy; what
    evalkit saw through the proxy is what the proxy passed on, so only the direct runs are fit."""
    from evalkit.results.reader import load_results
    from evalkit.scenario.model import load_scenarios
    from evalkit.simfit.classify import classify_files

    path = ROOT / "results" / "forge-smollm2.jsonl"
    scenarios = load_scenarios(sorted((ROOT / "scenarios").rglob("*.yaml")))
    found = classify_files([path], "smollm2", scenarios)
    runs = load_results([path]).runs
    direct = {r.run_id for r in runs if r.cell.backend == "direct" and r.counted and r.calls}
    proxied = {r.run_id for r in runs if r.cell.backend.startswith("forge-") and r.counted and r.calls}
    assert proxied and 0 < found.runs + found.skipped <= len(direct)
