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

from tests.fake_wheel import fake_wheel

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


# --- issue 36 item 7, issue 38 item 3: hostile versions, half-made venvs, pinned wheels ---------------

HOSTILE_VERSIONS = [
    "0.10.0 --index-url=x",
    "../../tmp/x",
    "..",
    "0.10.0/../../x",
    "0.10.0;touch pwned",
    "$(touch pwned)",
    "-r/etc/passwd",
    "0.10.0\n",
    "/tmp/x",
]


@pytest.mark.parametrize("version", HOSTILE_VERSIONS)
@pytest.mark.parametrize("how", ["argument", "FORGE_VERSION"])
def test_a_version_that_is_not_a_release_number_is_refused_before_anything(
    version: str, how: str, tmp_path: Path
) -> None:
    clone = _scripts_copy(tmp_path)
    args, env = ([version], dict(os.environ)) if how == "argument" else ([], {**os.environ, "FORGE_VERSION": version})
    done = _script("install-forge.sh", *args, env=env, cwd=clone)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"install-forge: '{version}' is not a release number (e.g. 0.10.0)\n"
    assert not (clone / ".forge").exists() and not (clone / "pwned").exists()


def test_a_version_folder_that_links_out_of_forge_is_refused(tmp_path: Path) -> None:
    clone = _scripts_copy(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (clone / ".forge").mkdir()
    (clone / ".forge/0.0.9").symlink_to(tmp_path / "elsewhere")
    done = _script("install-forge.sh", "0.0.9", cwd=clone)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "install-forge: .forge/0.0.9 is not a folder under .forge/ (a link?); remove it or choose another version"
    )
    assert list((tmp_path / "elsewhere").iterdir()) == []


def _python312() -> str:
    done = subprocess.run(["bash", str(ROOT / "scripts/find-python312.sh")], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(done.stderr.strip())
    return done.stdout.strip()


def _scripts_copy(tmp_path: Path) -> Path:
    """A folder with the two scripts (all install-forge.sh reads before its last step, `pip install -e .`)."""
    clone = tmp_path / "clone"
    (clone / "scripts").mkdir(parents=True)
    for name in ("install-forge.sh", "find-python312.sh"):
        (clone / "scripts" / name).write_text((ROOT / "scripts" / name).read_text())
    return clone


def _offline(index: Path) -> dict[str, str]:
    """pip with no index and no configuration: it finds only the wheels in `index`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)}


def test_a_half_made_venv_is_made_again_and_an_unpinned_release_says_so(tmp_path: Path) -> None:
    python = _python312()
    clone = _scripts_copy(tmp_path)
    venv = clone / ".forge/0.0.2"
    # `python -m venv` cut short: bin/python is there, pip is not
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    wheel = fake_wheel(tmp_path / "index", "0.0.2")
    done = _script("install-forge.sh", "0.0.2", env={**_offline(tmp_path / "index"), "PYTHON312": python}, cwd=clone)
    assert "No module named pip" not in done.stderr
    assert "install-forge: .forge/0.0.2 is half-made (its Python has no working pip): making it again" in done.stdout
    assert "install-forge: no pinned hash for forge-guardrails 0.0.2 (pinned: " in done.stdout
    record = json.loads((venv / "forge-wheel.json").read_text())
    assert record["pinned"] is False and record["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert record["url"] is None  # found in a local folder: no path of this machine
    # it stopped at its last step only (this copy has no project to install editable)
    imported = subprocess.run([str(venv / "bin/python"), "-c", "import forge_fake"], capture_output=True, text=True)
    assert done.returncode != 0 and imported.returncode == 0


def test_a_pinned_release_installs_only_the_wheel_of_its_hash(tmp_path: Path) -> None:
    python = _python312()
    clone = _scripts_copy(tmp_path)
    fake_wheel(tmp_path / "index", "0.10.0")  # an index serving another wheel under 0.10.0's name
    done = _script("install-forge.sh", "0.10.0", env={**_offline(tmp_path / "index"), "PYTHON312": python}, cwd=clone)
    assert done.returncode != 0
    assert "install-forge: forge-guardrails 0.10.0 is pinned to the wheel of sha256 463e8115" in done.stdout
    assert "DO NOT MATCH THE HASHES" in done.stderr
    venv = clone / ".forge/0.10.0"
    assert not (venv / "forge-wheel.json").exists()
    found = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "show", "forge-guardrails"], capture_output=True, text=True
    )
    assert found.returncode != 0  # nothing installed


def test_the_pinned_hashes_are_the_ones_docs_give() -> None:
    import re

    script = (ROOT / "scripts/install-forge.sh").read_text()
    pinned = dict(re.findall(r"^  \[([0-9.]+)\]=([0-9a-f]{64})$", script, re.M))
    documented = dict(re.findall(r"^\| ([0-9.]+) \| `([0-9a-f]{64})` \|$", (ROOT / "docs/guards.md").read_text(), re.M))
    assert pinned == documented and set(pinned) == {"0.7.3", "0.10.0"}
