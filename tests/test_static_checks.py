"""The static checks, run as tests so that CI runs them: `ruff check .`, `ruff format --check .` and
`mypy evalkit` (strict, with the settings in pyproject.toml). Each fails with the tool's own output.
A tool that is not installed skips its test, naming the extra that installs it; under CI (`CI` set)
it fails instead, since .ci/run installs the dev extra."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CHECKS = [
    ("ruff", ["check", "."]),
    ("ruff", ["format", "--check", "."]),
    ("mypy", ["evalkit"]),  # its strictness and overrides: pyproject.toml's [tool.mypy]
]


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed in this Python: pip install -e '.[dev]'"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.mark.parametrize(("tool", "args"), CHECKS, ids=[" ".join([t, *a]) for t, a in CHECKS])
def test_the_code_passes(tool: str, args: list[str]) -> None:
    _require(tool)
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        shown = (done.stdout[-8000:] + done.stderr[-2000:]).strip()
        pytest.fail(f"{tool} {' '.join(args)} (exit {done.returncode}):\n{shown}", pytrace=False)
