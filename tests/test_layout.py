"""The package's layout and style rules, checked in CI (scripts/check_layout.py states the rules)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import check_layout  # noqa: E402


def test_the_layout_rules_hold() -> None:
    assert check_layout.problems() == []


def test_an_upward_import_is_found(tmp_path: Path) -> None:
    """The checker sees a function-level import that points up a layer (and the circle it makes)."""
    module = ROOT / "evalkit" / "stats" / "intervals.py"
    source = module.read_text(encoding="utf-8")
    probe = tmp_path / "intervals.py"
    probe.write_text(source + "\n\ndef _up() -> None:\n    from evalkit.gate.verdict import compare  # noqa\n")
    known = check_layout.modules()
    found = check_layout.imports(probe, known, name="evalkit.stats.intervals")
    assert "evalkit.gate.verdict" in found
    assert check_layout.layer("evalkit.gate.verdict") > check_layout.layer("evalkit.stats.intervals")


def test_a_circle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert check_layout.cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff_is_clean(args: list[str]) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is installed by the dev extra"
    done = subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
