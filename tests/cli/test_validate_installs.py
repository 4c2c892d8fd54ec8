"""`evalkit validate` tells a broken file (exit 1) from a valid one whose run needs something this
machine lacks: a model package, a Forge venv, Python 3.12 with Forge (noted, exit 0). Issue 38: it
said "5 of 17 files valid" and exit 1 for configs/, where every file was valid."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"


def _configs_copy(tmp_path: Path) -> Path:
    """configs/ beside the repository's scenarios and recordings, with no Forge venv beside it."""
    for name in ("scenarios", "recordings"):
        (tmp_path / name).symlink_to(ROOT / name)
    shutil.copytree(CONFIGS, tmp_path / "configs")
    return tmp_path / "configs"


def test_validate_configs_passes_every_committed_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _configs_copy(tmp_path)  # no .forge/ here: the Forge configs need their venvs
    count = len(list(folder.glob("*.yaml")))
    assert main(["validate", str(folder)]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert f"{count} of {count} files valid" in captured.out
    noted = [line for line in captured.err.splitlines() if line]
    assert any("forge-sim.yaml" in line and "venv" in line for line in noted), captured.err
    assert all(line.startswith("note: ") and "needs" in line for line in noted), captured.err
    assert "not installed here" in captured.out


def _phase_config(tmp_path: Path, venv: str) -> Path:
    text = (CONFIGS / "forge-sim.yaml").read_text(encoding="utf-8").replace("../.forge/${FORGE_VERSION:-0.10.0}", venv)
    assert venv in text
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    path = tmp_path / "configs" / "c.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


def test_a_venv_not_there_is_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _phase_config(tmp_path, "../no-such-venv")
    assert main(["validate", str(path)]) == 0
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"note: {path}: backends.1.serve.phases.1.venv: ") and "no-such-venv" in err, err


def test_a_venv_that_is_no_venv_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _phase_config(tmp_path, "../not-a-venv")
    (tmp_path / "not-a-venv").mkdir()  # a folder, without bin/
    assert main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(str(path)) and "not a virtual environment" in captured.err
    assert "0 of 1 file valid" in captured.out


def test_an_unknown_model_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (CONFIGS / "compare-models.yaml").read_text(encoding="utf-8").replace("model: smollm2", "model: nosuchmodel")
    assert "nosuchmodel" in text
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "configs").mkdir()
    path = tmp_path / "configs" / "c.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    assert "nosuchmodel" in capsys.readouterr().err
