"""scripts/install-agents.sh NAME@VERSION installs a release beside the pinned one, in
`.agents/<name>-<version>/` (the agent upgrade gate's two venvs): a version is a release number, so
it names a folder under `.agents/` and never leaves it. A bad one is refused in one line, exit 2,
before anything is made (no registry is asked)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("version", ["../x", "..", "2.60.0/../../y", "2.60.0 x", "latest"])
def test_a_version_that_is_not_a_release_number_is_refused(tmp_path: Path, version: str) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts/install-agents.sh", tmp_path / "scripts")
    done = subprocess.run(
        ["bash", "scripts/install-agents.sh", f"pydantic-ai@{version}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"install-agents: '{version}' is not a release number (e.g. 2.68.0)"
    assert not (tmp_path / ".agents").exists() and not any(tmp_path.parent.glob("y"))


def test_an_unknown_agent_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/install-agents.sh"), "nope@1.0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "install-agents: unknown agent 'nope' (known: pydantic-ai openai-agents)"
