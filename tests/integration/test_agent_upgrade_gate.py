"""examples/agent-upgrade-gate.yml runs: every `run:` step, in order, in a copy of the repository, with
the job's `env:` given plain values, against the pydantic-ai venvs scripts/install-agents.sh made here
(`.agents/` linked into the copy, so its install step finds them and does nothing). Skips without both
releases. The slow test runs the workflow at its own N and requires the committed gate summary
(reports/agent-upgrade-gate-sim.md) word for word."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.integration.readme_blocks import ROOT, copy_repo, evalkit_shim

WORKFLOW = ROOT / "examples" / "agent-upgrade-gate.yml"
COMMITTED = ROOT / "reports" / "agent-upgrade-gate-sim.md"


def _job() -> tuple[dict[str, str], list[dict[str, str]]]:
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["gate"]
    return dict(job.get("env") or {}), list(job["steps"])


def test_the_workflow_keeps_expressions_out_of_its_scripts_and_swaps_only_the_release() -> None:
    env, steps = _job()
    scripts = [s["run"] for s in steps if "run" in s]
    assert scripts and not any("${{" in s for s in scripts)
    runs = [s for s in scripts if "evalkit run" in s]
    assert [r.split("PYDANTIC_AI_VERSION=", 1)[1].split()[0] for r in runs] == ['"$OLD_AGENT"', '"$NEW_AGENT"']
    assert {r.replace("OLD", "X").replace("NEW", "X") for r in runs} == {runs[0].replace("OLD", "X")}
    config = (ROOT / env["CONFIG"]).read_text(encoding="utf-8")
    assert "${PYDANTIC_AI_VERSION:-2.68.0}" in config  # the config names the release through the variable


def _run_workflow(tmp_path: Path, runs: str) -> tuple[int, str]:
    env_job, steps = _job()
    for version in (env_job["OLD_AGENT"], env_job["NEW_AGENT"]):
        if not (ROOT / ".agents" / f"pydantic-ai-{version}" / "evalkit-agent.json").exists():
            pytest.skip(f"no .agents/pydantic-ai-{version}: run `bash scripts/install-agents.sh pydantic-ai@{version}`")
    workspace = copy_repo(tmp_path / "repo")
    (workspace / ".agents").symlink_to(ROOT / ".agents")
    for stale in (workspace / "results").glob("agent-*.jsonl"):
        stale.unlink()  # the workflow writes its own
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYDANTIC_AI_VERSION"}}
    env |= env_job | {"RUNS": runs, "GITHUB_STEP_SUMMARY": str(summary)}
    env["PATH"] = os.pathsep.join([str(evalkit_shim(tmp_path / "bin")), str(Path(sys.executable).parent), env["PATH"]])
    gate = 0
    for step in steps:
        if "run" not in step or step["run"].strip().startswith("python -m pip install -e"):
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


def test_the_workflow_runs_locally_and_the_headers_name_the_releases_that_ran(tmp_path: Path) -> None:
    """At one run per cell: every step runs; the gate's verdict is one of its own, and each results
    header names the pydantic-ai release the job pinned for it."""
    gate, summary = _run_workflow(tmp_path, "1")
    first = summary.splitlines()[0]
    assert gate in (0, 1, 4) and first.startswith("## evalkit gate: ")
    assert "SIMULATED" in summary
    env_job, _ = _job()
    for version in (env_job["OLD_AGENT"], env_job["NEW_AGENT"]):
        header = (tmp_path / "repo" / "results" / f"agent-{version}.jsonl").read_text(encoding="utf-8").splitlines()[0]
        assert f'"name":"pydantic-ai","package":"pydantic-ai-slim","version":"{version}"' in header


@pytest.mark.slow
def test_at_its_own_n_the_workflow_reproduces_the_committed_gate(tmp_path: Path) -> None:
    env_job, _ = _job()
    gate, summary = _run_workflow(tmp_path, env_job["RUNS"])
    assert summary == COMMITTED.read_text(encoding="utf-8")
    assert gate in (0, 1, 4)
