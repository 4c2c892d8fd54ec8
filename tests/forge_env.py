"""Where the tests find Forge (`forge-guardrails`, Python 3.12): a venv that scripts/install-forge.sh made
under `.forge/<version>/` in the repository (the newest version), else the interpreter that the
variable EVALKIT_FORGE_PYTHON names. Without either, the tests that need it skip, saying how to get it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["forge_python", "forge_version"]


def _version_key(path: Path) -> tuple[int, ...]:
    name = path.parent.parent.name  # .forge/<version>/bin/python
    return tuple(int(p) if p.isdigit() else -1 for p in name.split("."))


def forge_python() -> Path:
    """The Python of a Forge venv, or skip (with the way to make one)."""
    found = sorted((ROOT / ".forge").glob("*/bin/python"), key=_version_key)
    if found:
        return found[-1]
    named = os.environ.get("EVALKIT_FORGE_PYTHON")
    if named and Path(named).exists():
        return Path(named)
    pytest.skip(
        "no Forge venv: run `bash scripts/install-forge.sh` (makes .forge/<version>/) or set "
        "EVALKIT_FORGE_PYTHON to a Python 3.12 that has forge-guardrails"
    )


def forge_version(python: Path) -> str:
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('forge-guardrails'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()
