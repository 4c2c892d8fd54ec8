"""examples/forge-upgrade-gate.yml runs: every `run:` step, in order, in a copy of the repository, with
the job's `env:` given plain values, against the Forge venvs scripts/install-forge.sh made here
(linked into the copy, so its install step finds them and does nothing). Skips without both releases.

The verdict for 0.7.3 -> 0.10.0 is a finding (README "Forge"): 0.7.3's proxy answers HTTP 502 when a
reply's tool-call arguments do not parse, those runs are infra errors, and on the simulated model
they pass the limit for a whole column (forge-norescue): the gate refuses the pair, exit 2 (it gives
exit 4, NOT JUDGED, when only cells pass it). The slow test runs the workflow at its own N
and requires the committed gate summary (reports/forge-upgrade-gate-sim.md) word for word; the fast
tests/test_regenerate.py holds the same file to the gate on the committed results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.integration.readme_blocks import ROOT, copy_repo, evalkit_shim

WORKFLOW = ROOT / "examples" / "forge-upgrade-gate.yml"
INSTALL = "python -m pip install -e ."
COMMITTED = ROOT / "reports" / "forge-upgrade-gate-sim.md"


def _job() -> tuple[dict[str, str], list[dict[str, str]]]:
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["gate"]
    return dict(job.get("env") or {}), list(job["steps"])


def test_the_workflow_keeps_expressions_out_of_its_scripts_and_swaps_only_the_release() -> None:
    env, steps = _job()
    scripts = [s["run"] for s in steps if "run" in s]
    assert scripts and not any("${{" in s for s in scripts)
    runs = [s for s in scripts if "evalkit run" in s]
    assert [r.split("FORGE_VERSION=", 1)[1].split()[0] for r in runs] == ['"$OLD_FORGE"', '"$NEW_FORGE"']
    assert {r.replace("OLD", "X").replace("NEW", "X") for r in runs} == {runs[0].replace("OLD", "X")}
    config = (ROOT / env["CONFIG"]).read_text(encoding="utf-8")
    assert "${FORGE_VERSION:-0.10.0}" in config  # the config names the release through the variable


def _run_workflow(tmp_path: Path, runs: str) -> tuple[int, str]:
    env_job, steps = _job()
    for version in (env_job["OLD_FORGE"], env_job["NEW_FORGE"]):
        if not (ROOT / ".forge" / version / "bin" / "python").exists():
            pytest.skip(f"no .forge/{version}: run `bash scripts/install-forge.sh {version}`")
    workspace = copy_repo(tmp_path / "repo")
    (workspace / ".forge").symlink_to(ROOT / ".forge")
    for stale in (workspace / "results").glob("forge-*.jsonl"):
        stale.unlink()  # the workflow writes its own
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "FORGE_VERSION"}}
    env |= env_job | {"RUNS": runs, "GITHUB_STEP_SUMMARY": str(summary)}
    env["PATH"] = os.pathsep.join([str(evalkit_shim(tmp_path / "bin")), str(Path(sys.executable).parent), env["PATH"]])
    gate = 0
    for step in steps:
        if "run" not in step or step["run"].strip() == INSTALL:
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True, text=True, check=False
        )
        if step.get("name") == "Gate":
            gate = done.returncode
            continue
        assert done.returncode == 0, f"{step.get('name')}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert (workspace / "gate.xml").read_text(encoding="utf-8").startswith("<?xml")
    return gate, summary.read_text(encoding="utf-8")


def test_the_workflow_runs_locally_and_the_gate_gives_a_verdict(tmp_path: Path) -> None:
    """At two runs per cell: every step runs; the gate's verdict is one of its own, and the versions
    that ran are the ones the job pinned."""
    gate, summary = _run_workflow(tmp_path, "2")
    first = summary.splitlines()[0]
    assert gate in (0, 1, 2, 4) and first.startswith("## evalkit gate: ")
    assert ("NOT JUDGED" in first) == (gate == 4) and ("ERROR (exit 2)" in first) == (gate == 2)
    assert gate == 2 or "SIMULATED" in summary  # a refused input has no verdict to label
    for version in ("0.7.3", "0.10.0"):
        header = (tmp_path / "repo" / "results" / f"forge-{version}.jsonl").read_text(encoding="utf-8")
        assert f'"name":"forge-guardrails","version":"{version}"' in header


@pytest.mark.slow
def test_at_its_own_n_the_workflow_reproduces_the_committed_gate(tmp_path: Path) -> None:
    env_job, _ = _job()
    gate, summary = _run_workflow(tmp_path, env_job["RUNS"])
    assert gate == 2
    assert summary == COMMITTED.read_text(encoding="utf-8")
