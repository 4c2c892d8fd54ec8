"""scripts/install-forge.sh and scripts/find-python312.sh: the one-line refusals, and (slow) a real
install into a fresh copy of the repository, twice."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(
    name: str, *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(cwd / "scripts" / name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_no_python_312_is_one_line_naming_where_it_looked(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = _script("find-python312.sh", env=env)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip() == (
        "find-python312: no Python 3.12 found (looked for $PYTHON312, python3.12 on PATH, "
        f"{tmp_path}/.pyenv/versions/3.12.*/bin/python3.12); install one, e.g. 'pyenv install 3.12'"
    )


def test_install_forge_refuses_a_python_that_is_not_312_before_doing_anything(tmp_path: Path) -> None:
    if sys.version_info[:2] == (3, 12):
        pytest.skip("this interpreter is a 3.12")
    env = {**os.environ, "PYTHON312": sys.executable}
    done = _script("install-forge.sh", "0.0.1", env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == f"find-python312: $PYTHON312={sys.executable} is not a working Python 3.12"
    assert not (ROOT / ".forge/0.0.1").exists()


def test_install_forge_refuses_a_version_that_is_not_a_release_number() -> None:
    done = _script("install-forge.sh", "0.10.0 --index-url=x")
    assert done.returncode == 2 and done.stderr.strip() == (
        "install-forge: '0.10.0 --index-url=x' is not a release number (e.g. 0.10.0)"
    )


@pytest.mark.slow
def test_a_fresh_install_records_its_wheel_and_a_second_one_does_nothing(tmp_path: Path) -> None:
    from tests.integration.readme_blocks import copy_repo

    clone = copy_repo(tmp_path / "clone")
    first = _script("install-forge.sh", cwd=clone)
    assert first.returncode == 0, first.stderr
    record = json.loads((clone / ".forge/0.10.0/forge-wheel.json").read_text())
    wheel = clone / ".forge/wheels" / record["wheel"]
    assert record["version"] == "0.10.0" and hashlib.sha256(wheel.read_bytes()).hexdigest() == record["sha256"]
    assert record["url"].startswith("https://") and str(tmp_path) not in json.dumps(record)
    help_text = subprocess.run(
        [str(clone / ".forge/0.10.0/bin/python"), "-m", "forge.proxy", "--help"], capture_output=True, text=True
    )
    assert help_text.returncode == 0 and "--inject-respond-tool" in help_text.stdout
    second = _script("install-forge.sh", cwd=clone)
    assert (
        second.returncode == 0
        and second.stdout.strip() == "install-forge: forge-guardrails 0.10.0 already installed in .forge/0.10.0"
    )
