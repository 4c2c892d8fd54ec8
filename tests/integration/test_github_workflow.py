"""examples/github-workflow.yml runs: every `run:` step, in order, in a git checkout of a copy of the
repository, with the job's `env:` given the values GitHub would (the base commit: this checkout's)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.integration.readme_blocks import ROOT, copy_repo, evalkit_shim

WORKFLOW = ROOT / "examples" / "github-workflow.yml"
INSTALL = "python -m pip install -e ."  # the test's interpreter has evalkit installed already


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _steps() -> tuple[dict[str, str], list[dict[str, str]]]:
    job = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["gate"]
    return dict(job.get("env") or {}), list(job["steps"])


def test_the_workflow_keeps_expressions_out_of_its_scripts() -> None:
    _, steps = _steps()
    scripts = [s["run"] for s in steps if "run" in s]
    assert scripts and not any("${{" in s for s in scripts)
    assert [s for s in scripts if s.strip() == INSTALL] == [INSTALL]


def test_the_workflow_runs_locally_and_the_gate_passes(tmp_path: Path) -> None:
    workspace = copy_repo(tmp_path / "checkout" / "repo")
    _git(workspace, "init", "-q")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "base")
    job_env, steps = _steps()
    summary = tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env |= {k: v for k, v in job_env.items() if "${{" not in v}
    env |= {
        "BASE_SHA": _git(workspace, "rev-parse", "HEAD"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "PATH": os.pathsep.join([str(evalkit_shim(tmp_path / "bin")), str(Path(sys.executable).parent), env["PATH"]]),
    }
    assert set(job_env) <= set(env), "every job variable has a value here"
    for step in steps:
        if "run" not in step or step["run"].strip() == INSTALL:
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=workspace, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, (
            f"{step.get('name')}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    assert (workspace / "gate.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert "pass" in summary.read_text(encoding="utf-8").splitlines()[0].lower()  # the job summary's verdict


def test_the_gate_step_runs_outside_github_actions(tmp_path: Path) -> None:
    """Issue 31: run locally, with no `$GITHUB_STEP_SUMMARY`, the gate step passes and writes its
    markdown to gate.md (it used to exit 2 on the empty path)."""
    _, steps = _steps()
    gate = next(s["run"] for s in steps if s.get("name") == "Gate")
    (tmp_path / "results").mkdir()
    for side in ("baseline", "candidate"):
        shutil.copy(ROOT / "results" / "compare-models.jsonl", tmp_path / "results" / f"{side}.jsonl")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "GITHUB_STEP_SUMMARY"}}
    env["PATH"] = os.pathsep.join([str(evalkit_shim(tmp_path / "bin")), str(Path(sys.executable).parent), env["PATH"]])
    done = subprocess.run(
        ["bash", "-e", "-c", gate], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pass" in (tmp_path / "gate.md").read_text(encoding="utf-8").splitlines()[0].lower()
    assert (tmp_path / "gate.xml").read_text(encoding="utf-8").startswith("<?xml")
