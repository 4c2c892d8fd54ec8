"""Forge's real proxy (`python -m forge.proxy`, forge-guardrails) as a server phase in front of
`evalkit serve sim`: the runs go through it, what the model served is counted apart from what evalkit
saw, and the header names Forge's version and installed files. Skips without a Forge venv
(tests/forge_env.py says where it looks)."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.report.terminal import summary_table
from evalkit.results.forge_wheel import read_wheel_record
from evalkit.results.installed_files import wheel_files_sha256
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.forge_env import forge_python, forge_version

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [ROOT / "scenarios/casual_greeting/*.yaml", ROOT / "scenarios/sequential_reasoning/*.yaml"]


def _config(tmp_path: Path, python: Path, flags: list[str], name: str) -> Path:
    forge = ", ".join(json.dumps(f) for f in ["-m", "forge.proxy", "--backend-url", "{upstream}", "--backend", "openai",
                                              "--port", "{port}", *flags])  # fmt: skip
    scenarios = ", ".join(json.dumps(str(s)) for s in SCENARIOS)
    text = f"""name: {name}
seed: 11
runs: 2
scenarios: [{scenarios}]
backends:
  - label: forge-proxy
    kind: openai
    model: small-local
    concurrency: 2
    serve:
      phases:
        - name: model
          command: ["{{python}}", -m, evalkit, serve, sim, --port, "{{port}}", --config, "{{config}}"]
        - name: forge
          python: {json.dumps(str(python))}
          command: [{forge}]
          ready: /forge/health
strategies:
  trust_text: [trust_text]
"""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_forge_proxy_in_front_of_the_simulated_model(tmp_path: Path) -> None:
    python = forge_python()
    results = load_results([run_config(load_config(_config(tmp_path, python, [], "forge")), tmp_path / "f.jsonl")])
    runs = results.runs
    assert len(runs) == 16 and all(r.counted for r in runs) and all(r.simulated for r in runs)
    # Forge retries a reply it rejects, at most --max-retries (3) times per call evalkit sees
    assert all(r.served and r.model_calls <= r.served.calls <= 4 * r.model_calls for r in runs)
    assert any(r.served and r.served.calls > r.model_calls for r in runs)  # and here it did
    described = results.headers[0].backends["forge-proxy"]
    assert described["simulated"] is True and described["label"] == "SIMULATED"
    _, forge = described["started_by_evalkit"]["phases"]
    assert forge["name"] == "forge" and forge["command"][1:3] == ["-m", "forge.proxy"]
    (package,) = forge["packages"]
    # wheel_sha256 is there when scripts/install-forge.sh recorded the wheel it installed
    assert {k: v for k, v in package.items() if k not in ("wheel_sha256", "files_sha256", "files")} == {
        "name": "forge-guardrails",
        "version": forge_version(python),
    }
    wheel = read_wheel_record(Path(python).parents[1])
    if wheel is not None:  # a venv install-forge.sh made: pip installed the very wheel it recorded
        assert package["wheel_sha256"] == wheel.sha256
        # the installed files are the wheel's: the hash computed from the archive itself
        archive = Path(python).parents[2] / "wheels" / wheel.wheel
        assert package["files_sha256"] == wheel_files_sha256(archive)
    assert "calls per run:" in summary_table(results) and "[SIM]" in summary_table(results)


def test_forge_without_retry_budgets_serves_exactly_what_evalkit_sees(tmp_path: Path) -> None:
    """`--max-retries 0 --max-tool-errors 0`: Forge never calls the model again on its own, so the
    counting pass-through must see exactly the calls evalkit made."""
    python = forge_python()
    flags = ["--max-retries", "0", "--max-tool-errors", "0"]
    path = run_config(load_config(_config(tmp_path, python, flags, "forge0")), tmp_path / "f0.jsonl")
    runs = load_results([path]).runs
    assert len(runs) == 16
    assert [r.served.calls if r.served else None for r in runs] == [r.model_calls for r in runs]
