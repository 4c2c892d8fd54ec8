"""Unusable inputs give one line in the project's words: an empty folder to validate, a scenario that
is not UTF-8 (line and column), a results file without a header given to rescore, a last line cut
short (a warning, not a Python `UserWarning` with a source path), and `import bfcl` without the
optional package (the extra to install)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results/compare-models.jsonl"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_validate_on_an_empty_folder_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: "0 of 0 files valid", exit 0
    (tmp_path / "empty").mkdir()
    assert main(["validate", str(tmp_path / "empty")]) == 2
    assert "no *.yaml or *.yml files" in one_line(capsys.readouterr().err)


def test_invalid_utf8_names_line_and_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: "not UTF-8 text (byte 47)"
    path = tmp_path / "s.yaml"
    path.write_bytes(b"id: x\nfamily: casual_greeting\ndescription: caf\xe9\n")
    assert main(["validate", str(path)]) == 1
    assert one_line(capsys.readouterr().err) == f"{path}:3: not UTF-8 text: byte 0xe9 at line 3, column 17"


def test_rescore_of_a_file_without_header_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: "its header has no strategy stack 'trust_text'"
    headless = tmp_path / "in.jsonl"
    headless.write_text("".join(RESULTS.read_text().splitlines(keepends=True)[1:]))
    out = tmp_path / "out.jsonl"
    assert main(["rescore", str(headless), "-o", str(out), "--scenarios", str(ROOT / "scenarios")]) == 2
    assert (
        one_line(capsys.readouterr().err)
        == f"evalkit: error: {headless}: no header record: not an evalkit results file"
    )
    assert list(tmp_path.iterdir()) == [headless]


def test_a_cut_last_line_is_a_one_line_warning(tmp_path: Path) -> None:
    # before: "/…/evalkit/results/reader.py:106: UserWarning: …" and the source line under it
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(RESULTS.read_bytes()[:-50])
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "report", str(cut), "-o", str(tmp_path / "r.md"), "--format", "markdown"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr and "reader.py" not in proc.stderr
    cut_lines = [line for line in proc.stderr.splitlines() if "cut short" in line]
    assert cut_lines == [
        f"evalkit: warning: {cut}:164: the last record is cut short (an interrupted write) and is skipped"
    ]


def test_import_bfcl_without_the_package_names_the_extra(tmp_path: Path) -> None:
    # the package hidden from this process only: a None in sys.modules makes it unimportable
    code = (
        "import sys; sys.modules['bfcl_eval'] = None\n"
        "from evalkit.cli import main\n"
        f"sys.exit(main(['import', 'bfcl', '--categories', 'simple_python', '-o', {str(tmp_path / 'o')!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert line.startswith("evalkit: error: bfcl-eval is not usable (not installed)")
    assert "pip install 'evalkit[bfcl]'" in line
