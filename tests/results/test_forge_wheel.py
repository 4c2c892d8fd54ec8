"""The record scripts/install-forge.sh leaves in each Forge venv, and what a results header takes from it."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from evalkit.errors import ConfigError
from evalkit.results.forge_wheel import WHEEL_RECORD, ForgeWheel, installed_forge, read_wheel_record

RECORD = {
    "package": "forge-guardrails",
    "version": "0.10.0",
    "wheel": "forge_guardrails-0.10.0-py3-none-any.whl",
    "sha256": "0" * 64,
    "url": "https://files.pythonhosted.org/packages/forge_guardrails-0.10.0-py3-none-any.whl",
    "requires_python": ">=3.12",
    "python": "3.12.1",
}


def test_a_record_reads_back_whole(tmp_path: Path) -> None:
    (tmp_path / WHEEL_RECORD).write_text(json.dumps(RECORD))
    record = read_wheel_record(tmp_path)
    assert record == ForgeWheel(**RECORD) and record.provenance() == RECORD


def test_no_record_is_none_and_a_broken_one_names_the_file(tmp_path: Path) -> None:
    assert read_wheel_record(tmp_path) is None
    (tmp_path / WHEEL_RECORD).write_text(
        json.dumps({**RECORD, "sha256": None} | {"version": None}).replace('"wheel"', '"w"')
    )
    with pytest.raises(ConfigError, match=rf"{WHEEL_RECORD}: not a forge-wheel record \(KeyError"):
        read_wheel_record(tmp_path)


def test_this_interpreter_reports_the_forge_it_has() -> None:
    try:
        installed = version("forge-guardrails")
    except PackageNotFoundError:
        assert installed_forge() == {}
        return
    found = installed_forge()
    assert found["version"] == installed
    record = read_wheel_record(sys.prefix)
    if record is not None:  # a venv of scripts/install-forge.sh: the wheel it installed, by hash
        wheel = Path(__file__).resolve().parents[2] / ".forge" / "wheels" / record.wheel
        assert found["sha256"] == record.sha256
        if wheel.is_file():
            assert hashlib.sha256(wheel.read_bytes()).hexdigest() == record.sha256


def test_the_wheel_docs_name_is_the_one_installed() -> None:
    """docs/guards.md gives 0.10.0's wheel hash; a venv that install-forge.sh made holds the same."""
    root = Path(__file__).resolve().parents[2]
    documented = "463e8115cbcb6a0389759c0fc97d63c825481664b404609e4e1e6d99320239c9"
    assert documented in (root / "docs/guards.md").read_text()
    record = read_wheel_record(root / ".forge/0.10.0")
    if record is None:
        pytest.skip("no .forge/0.10.0 here (bash scripts/install-forge.sh)")
    assert record.sha256 == documented


def _installed(tmp_path: Path, version: str) -> Path:
    """A fake forge-guardrails VERSION installed into a folder (pip --target), the folder."""
    from tests.fake_wheel import fake_wheel

    wheel = fake_wheel(tmp_path / "w", version)
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


def test_the_in_process_guard_names_its_installed_files_and_an_edited_one(tmp_path: Path) -> None:
    from evalkit.results.installed_files import wheel_files_sha256

    site = _installed(tmp_path, "0.10.0")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / WHEEL_RECORD).write_text(json.dumps({**RECORD, "pinned": True}))
    found = installed_forge(tmp_path / "venv", [str(site)])
    reference = wheel_files_sha256(tmp_path / "w" / "forge_guardrails-0.10.0-py3-none-any.whl")
    assert found == {**RECORD, "pinned": True, "files_sha256": reference, "files": 5}
    (site / "forge_fake" / "core.py").write_text("print('edited')\n")
    edited = installed_forge(tmp_path / "venv", [str(site)])
    assert edited["files_sha256"] != reference and edited["modified"] == ["forge_fake/core.py"]
    # a venv the script did not make: no wheel hash, the files' all the same
    assert installed_forge(tmp_path / "nowhere", [str(site)])["files_sha256"] == edited["files_sha256"]
    assert installed_forge(tmp_path / "nowhere", [str(tmp_path / "empty")]) == {}
