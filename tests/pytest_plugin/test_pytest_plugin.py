"""The pytest plug-in, run by pytest's own `pytester` (in subprocesses: numpy cannot be imported twice
in one process, which pytester's in-process runs would ask of it): one item per scenario cell, an item failed with
the gate's reason and interval against a baseline, and the `evalkit_run` fixture."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = str(ROOT / "scenarios")
# the entry point loads the plug-in once evalkit is installed; a checkout not reinstalled needs -p
PLUGIN = (
    []
    if any(e.name == "evalkit" for e in entry_points(group="pytest11"))
    else ["-p", "evalkit.integrations.pytest_plugin"]
)


def _config(folder: Path, name: str, strategies: dict[str, list[object]]) -> Path:
    doc = {
        "name": name,
        "seed": 3,
        "runs": 20,
        "scenarios": [
            f"{SCENARIOS}/sequential_reasoning/medication_chain.yaml",
            f"{SCENARIOS}/casual_greeting/hi.yaml",
        ],
        "modes": ["native"],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": strategies,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_one_item_per_cell_and_all_pass_without_a_baseline(pytester: pytest.Pytester) -> None:
    stacks = {"trust_text": ["trust_text"], "nudge": ["retry_nudge"], "grammar": [{"grammar": {"mode": "grammar"}}]}
    cfg = _config(pytester.path, "plain", stacks)
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg), "-v")
    result.assert_outcomes(passed=4, skipped=2)  # a grammar with native tools is unsupported: skipped
    result.stdout.fnmatch_lines(["*sim/native/nudge/seq-medication-chain PASSED*"])


def test_a_regressed_cell_fails_with_the_gates_reason_and_interval(pytester: pytest.Pytester) -> None:
    # the baseline nudges a text reply back to tools; the candidate trusts text, under the same label
    base = _config(pytester.path, "guards", {"guard": ["retry_nudge"]})
    assert main(["run", str(base), "-o", str(pytester.path / "base.jsonl"), "--no-progress"]) == 0
    (pytester.path / "cand").mkdir()
    cand = _config(pytester.path / "cand", "guards", {"guard": ["trust_text"]})
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--evalkit", str(cand), "--evalkit-baseline", str(pytester.path / "base.jsonl")
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    result.stdout.fnmatch_lines(["*sim/native/guard/seq-medication-chain: correct rate dropped*90% CI*Holm*"])


def test_a_cell_with_no_counted_run_fails_as_not_judged(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, "dead", {"trust_text": ["trust_text"]})
    doc = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    doc["runs"] = 1
    doc["backends"] = [
        {
            "label": "down",
            "kind": "openai",
            "model": "m",
            "url": "http://127.0.0.1:9",
            "timeout_s": 1,
            "retry": {"attempts": 1, "base_delay_s": 0, "max_delay_s": 0},
        }
    ]
    cfg.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*not judged: no counted run (infra_error)*"])


def test_the_fixture_runs_a_config_through_the_python_api(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, "api", {"trust_text": ["trust_text"]})
    pytester.makepyfile(
        f"""
        def test_it(evalkit_run):
            results = evalkit_run({str(cfg)!r}, runs=3)
            assert len(results.runs) == 2 * 3
            assert {{r.cell.strategy for r in results.runs}} == {{"trust_text"}}
        """
    )
    pytester.runpytest_subprocess(*PLUGIN).assert_outcomes(passed=1)
