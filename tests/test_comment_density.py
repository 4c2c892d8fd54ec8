"""scripts/comment_density.py: which lines are full-line comments and which are code (issue 39, item 6)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import comment_density  # noqa: E402

SOURCE = '''"""A module docstring
on two lines."""

# a full-line comment
x = 1  # a trailing comment is a code line
text = "# not a comment, a string"


def f() -> None:
    # an indented comment line
    """One line."""
'''


def test_full_line_comments_and_code_lines_are_told_apart() -> None:
    # comments: the two full lines; code: the docstring's 2 lines, x, text, def, its docstring
    assert comment_density.count(SOURCE) == (2, 6)


def test_the_density_of_a_package_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("# why\nx = 1\ny = 2\n")
    assert comment_density.main([str(package)]) == 0
    assert "50.0 full-line comments per 100 code lines (1 / 2)" in capsys.readouterr().out


def test_a_missing_package_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert comment_density.main([str(tmp_path / "nowhere")]) == 2
    assert "not a directory" in capsys.readouterr().err
