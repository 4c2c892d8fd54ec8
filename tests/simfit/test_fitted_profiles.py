"""The committed fitted profiles are what scripts/fit_profiles.py makes from the committed results."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]


def test_committed_fitted_profiles_match_the_script() -> None:
    # the fit replays the committed BFCL multi-turn runs, whose mocks are classes of bfcl_eval
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    spec = importlib.util.spec_from_file_location("fit_profiles", ROOT / "scripts" / "fit_profiles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = os.getcwd()
    try:
        stale = module.stale()
    finally:
        os.chdir(before)
    assert stale == [], f"stale fitted profiles {stale}: run python scripts/fit_profiles.py"


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
