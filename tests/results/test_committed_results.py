"""The committed real-model results: replaying their recordings reproduces every run, with no server.

`results/adr013.jsonl` came from real llama-servers (SmolLM2-135M, Gemma 3 270M) with `--record
recordings/adr013`. Re-running the config from those recordings must re-score every run exactly as
recorded, so the committed numbers (and the README table built from them) stay checkable in CI.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.backends.packaged import MODELS
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config

ROOT = Path(__file__).resolve().parents[2]


def outcomes(path: Path) -> dict[str, tuple[object, ...]]:
    return {
        r.run_id: (r.outcome, r.completed, r.correct, r.failure, r.retries, r.model_calls)
        for r in load_results([path]).runs
    }


def test_the_committed_adr013_results_are_real_and_replay_exactly(tmp_path: Path) -> None:
    committed = ROOT / "results/adr013.jsonl"
    results = load_results([committed])
    described = {label: info for h in results.headers for label, info in h.backends.items()}
    simulated = {label for label, info in described.items() if info.get("simulated")}
    assert simulated == {"sim-small", "forge-sim", "forge-respond-sim"}  # the model behind Forge's proxy too
    assert described["smollm2"]["model_sha256"] == MODELS["smollm2"].sha256
    assert described["gemma3-270m"]["model_sha256"] == MODELS["gemma3-270m"].sha256
    assert all(not r.simulated for r in results.runs if r.cell.backend not in simulated)
    for label in ("forge-sim", "forge-respond-sim", "forge-smollm2", "forge-respond-smollm2"):
        _model, forge = described[label]["started_by_evalkit"]["phases"]
        assert forge["packages"][0]["name"] == "forge-guardrails" and forge["packages"][0]["version"] == "0.10.0"
    for label in ("forge-smollm2", "forge-respond-smollm2"):  # Forge's proxy in front of the packaged SmolLM2
        model, _forge = described[label]["started_by_evalkit"]["phases"]
        assert model["model_sha256"] == MODELS["smollm2"].sha256

    config = load_config(ROOT / "configs/adr013.yaml").as_replay(ROOT / "recordings/adr013")
    replayed = run_config(config, tmp_path / "replayed.jsonl")
    assert outcomes(replayed) == outcomes(committed)
