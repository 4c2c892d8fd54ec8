"""scripts/install-cline.sh: its one-line refusals, and nothing done twice (the real install: .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-cline.sh"


def _install(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path if path is not None else os.environ.get("PATH", "")}
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run([bash, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)


def test_a_version_that_is_not_a_release_number_is_refused_in_one_line() -> None:
    done = _install("latest")
    assert done.returncode == 2
    assert done.stderr == "install-cline: 'latest' is not a release number (e.g. 3.0.65)\n"


def test_a_missing_node_is_said_in_one_line(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # the tools the script needs before it looks for node, and not node
    bin_dir.mkdir()
    for tool in ("dirname",):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    done = _install("3.0.65", path=str(bin_dir))
    assert done.returncode == 2
    assert done.stderr == "install-cline: 'node' is not on PATH: install Node.js 20 or later (with npm) first\n"


def test_an_installed_version_is_not_installed_again() -> None:
    if not (ROOT / ".agents" / "cline" / "3.0.65" / "install.json").is_file():
        if os.environ.get("CI"):
            pytest.fail("Cline is not installed and CI is set: .ci/run runs `bash scripts/install-cline.sh`")
        pytest.skip("Cline 3.0.65 is not installed: run `bash scripts/install-cline.sh`")
    done = _install()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "install-cline: cline 3.0.65 already installed in .agents/cline/3.0.65\n"
