"""A backend entry's `strategies` and `modes` narrow the matrix for that entry only: a guard proxy's
entry runs `[trust_text]` alone while evalkit's own stacks run on the direct entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.matrix import plan_runs
from evalkit.run.preflight import config_scenarios
from evalkit.run.runner import run_config
from tests.run.test_runner import config

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = [
    {"label": "direct", "kind": "sim", "model": "small-local"},
    {"label": "proxy", "kind": "sim", "model": "small-local", "strategies": ["trust_text"], "modes": ["native"]},
]


def _cells(cfg: RunConfig) -> set[tuple[str, str, str]]:
    return {(r.cell.backend, r.cell.mode, r.cell.strategy) for r in plan_runs(cfg, config_scenarios(cfg))}


def test_an_entry_runs_only_its_stacks_and_modes():
    cfg = config(backends=BACKENDS, modes=["native", "prompt"])
    everything = {(b, m, s) for b in ("direct", "proxy") for m in ("native", "prompt") for s in ("trust_text", "nudge")}
    not_on_proxy = {("proxy", "native", "nudge"), ("proxy", "prompt", "nudge"), ("proxy", "prompt", "trust_text")}
    assert _cells(cfg) == everything - not_on_proxy
    scenarios = len(config_scenarios(cfg))
    assert cfg.cell_count(scenarios) == 5 * scenarios == len(plan_runs(cfg, config_scenarios(cfg))) // cfg.runs
    assert cfg.cell_count(scenarios, {"proxy"}) == scenarios


def test_a_run_writes_only_those_cells(tmp_path):
    out = run_config(config(backends=BACKENDS, runs=2), tmp_path / "r.jsonl")
    runs = load_results([out]).runs
    assert {(r.cell.backend, r.cell.strategy) for r in runs} == {
        ("direct", "trust_text"),
        ("direct", "nudge"),
        ("proxy", "trust_text"),
    }
    assert len(runs) == 3 * 8 * 2  # three columns of eight scenarios, two runs each


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("strategies", ["respond"], r"backends\.1\.strategies: 'respond' is not a stack of `strategies`"),
        ("modes", ["prompt"], r"backends\.1\.modes: 'prompt' is not in the config's `modes`"),
        ("strategies", [], r"backends\.1\.strategies"),
    ],
)
def test_an_unknown_stack_or_mode_is_a_one_line_error(tmp_path, field, value, message):
    text = (
        "name: t\nscenarios: ['x']\nbackends:\n  - {label: a, kind: sim, model: small-local}\n"
        f"  - {{label: b, kind: sim, model: small-local, {field}: {value}}}\nstrategies: {{trust_text: [trust_text]}}\n"
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_an_entry_without_them_keeps_its_fingerprint():
    """Fields added later count only when set: a config that does not use them hashes as before."""
    plain = config()
    explicit = config(backends=[{**plain.backends[0].model_dump(), "strategies": None}])
    assert plain.fingerprint() == explicit.fingerprint()
    narrowed = config(backends=[{"label": "sim", "kind": "sim", "model": "small-local", "strategies": ["nudge"]}])
    assert narrowed.fingerprint() != plain.fingerprint()


def test_n_on_the_command_line_keeps_a_serve_chain_valid():
    """`-n` rebuilds the config; a chain's unset llama-server fields must not reappear as given
    (configs/forge-sim.yaml refused `-n 2` with "ctx_size: with `phases`, ...")."""
    cfg = load_config(ROOT / "configs/forge-sim.yaml")
    two = cfg.with_runs(2)
    assert two.runs == 2 and two.fingerprint() == cfg.model_copy(update={"runs": 2}).fingerprint()
