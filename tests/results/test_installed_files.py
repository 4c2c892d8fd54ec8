"""Provenance that identifies the code (issue 38, item 3): two clean installs of one wheel give one
`files_sha256`, the one computed from the wheel archive itself, in this interpreter and through a
server phase's probe in another; an edited installed file changes it and is named as modified. The
RECORD's own hash (what headers recorded before) differs between the two installs."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.backends.phase_packages import package_versions
from evalkit.results.installed_files import installed_files, wheel_files_sha256
from tests.fake_wheel import fake_wheel


def _venv(folder: Path, wheel: Path) -> Path:
    """A venv (no pip of its own) with `wheel` installed by this interpreter's pip; its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = (folder / "lib").glob("python3.*/site-packages")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    subprocess.run([*pip, "--target", str(site), str(wheel)], check=True, capture_output=True)
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def installs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The same wheel installed twice, each time from a copy at another path: (wheel, python1, python2)."""
    root = tmp_path_factory.mktemp("installs")
    wheel = fake_wheel(root / "a", "1.2.3")
    copy = root / "b" / wheel.name
    copy.parent.mkdir()
    shutil.copy2(wheel, copy)
    return wheel, _venv(root / "venv1", wheel), _venv(root / "venv2", copy)


def _dist(python: Path) -> md.Distribution:
    (site,) = (python.parents[1] / "lib").glob("python3.*/site-packages")
    (dist,) = md.distributions(name="forge-guardrails", path=[str(site)])
    return dist


def test_two_installs_of_one_wheel_give_the_wheels_own_files_hash(installs: tuple[Path, Path, Path]) -> None:
    wheel, first, second = installs
    reference = wheel_files_sha256(wheel)  # from the archive's bytes, not from an install
    assert installed_files(_dist(first)) == installed_files(_dist(second)) == {"files_sha256": reference, "files": 5}
    # what headers recorded until now: the RECORD's own bytes, which differ between the two installs
    records = [hashlib.sha256(_dist(p).read_text("RECORD").encode()).hexdigest() for p in (first, second)]  # type: ignore[union-attr]
    assert records[0] != records[1]


def test_the_probe_of_a_phase_interpreter_gives_the_same_hash(installs: tuple[Path, Path, Path]) -> None:
    wheel, first, second = installs
    found = [package_versions(str(p), ["forge_fake"], [])["packages"] for p in (first, second)]
    assert found[0] == found[1]
    (package,) = found[0]
    assert package["name"] == "forge-guardrails" and package["version"] == "1.2.3"
    assert package["files_sha256"] == wheel_files_sha256(wheel) and "record_sha256" not in package


def test_an_edited_file_changes_the_hash_and_is_named(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path / "w", "1.2.3")
    python = _venv(tmp_path / "venv", wheel)
    (site,) = (tmp_path / "venv" / "lib").glob("python3.*/site-packages")
    (site / "forge_fake" / "core.py").write_text("def main() -> None:\n    print('edited')\n")
    (site / "forge_fake" / "__init__.py").unlink()
    expected = {"modified": ["forge_fake/core.py"], "missing": ["forge_fake/__init__.py"]}
    here = installed_files(_dist(python))
    assert here["files_sha256"] != wheel_files_sha256(wheel)
    assert {k: here[k] for k in expected} == expected
    (probed,) = package_versions(str(python), ["forge_fake"], [])["packages"]
    assert probed["files_sha256"] == here["files_sha256"] and probed["modified"] == ["forge_fake/core.py"]


def test_an_editable_install_is_named_not_hashed(tmp_path: Path) -> None:
    info = tmp_path / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text("__editable__.pkg-1.0.pth,sha256=AAAA,1\npkg-1.0.dist-info/RECORD,,\n")
    (info / "direct_url.json").write_text('{"dir_info": {"editable": true}, "url": "file:///src/pkg"}')
    assert installed_files(md.PathDistribution(info)) == {"editable": True}
    (info / "direct_url.json").unlink()  # the same files, installed from a wheel: hashed, and the .pth is missing
    assert installed_files(md.PathDistribution(info))["missing"] == ["__editable__.pkg-1.0.pth"]
