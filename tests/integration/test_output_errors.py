"""A report or gate output that cannot be written is a one-line error with exit code 2 (unusable
input), never a traceback with exit 1 (the gate's "regressed"). The paths fail even for root: a
path under a regular file, a directory, an empty path (an unset `$GITHUB_STEP_SUMMARY`), /dev/full
(ENOSPC) and a file-size limit (EFBIG, in a child process with RLIMIT_FSIZE)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import OutputError
from evalkit.results.output_file import write_output
from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]
RESULTS = str(ROOT / "results/compare-models.jsonl")


def bad_paths(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """name -> (path, what the error says)"""
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "folder").mkdir()
    paths = {
        "under a file": (str(tmp_path / "file.txt/out.html"), "is not a directory"),
        "a directory": (str(tmp_path / "folder"), "Is a directory"),
        "empty": ("", "an empty path"),
    }
    if Path("/dev/full").exists():
        paths["full disk"] = ("/dev/full", "No space left on device")
    return paths


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_write_output_says_what_failed(tmp_path: Path) -> None:
    for path, reason in bad_paths(tmp_path).values():
        for append in (False, True):
            with pytest.raises(OutputError, match=reason):
                write_output(path, "x" * 100_000, option="--junit", append=append)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "folder"]  # no temporary file left
    assert write_output(tmp_path / "new/a.md", "a", append=True).read_text() == "a"


def test_report_output_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: NotADirectoryError / IsADirectoryError / OSError tracebacks, exit 1
    for path, reason in bad_paths(tmp_path).values():
        if not path:
            continue  # `-o ''` is not an output a shell passes for an unset variable
        assert main(["report", RESULTS, "-o", path, "--format", "markdown", "--transcripts", "0"]) == 2
        line = one_line(capsys.readouterr().err)
        assert line.startswith(f"evalkit: error: report {path}: ") and reason in line


@pytest.mark.parametrize("option", ["--junit", "--markdown"])
def test_gate_output_errors_are_exit_2_and_the_other_file_is_written(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, (path, reason) in bad_paths(tmp_path).items():
        other = "--markdown" if option == "--junit" else "--junit"
        written = tmp_path / f"other-{name}"
        args = ["gate", "--baseline", RESULTS, "--candidate", RESULTS, option, path, other, str(written)]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert one_line(err) == f"evalkit: error: {option} {path or repr('')}: " + one_line(err).split(": ", 3)[-1]
        assert reason in err and written.stat().st_size > 0


def test_an_unusable_gate_output_fails_before_the_inputs_are_read_and_junit_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 31: `--markdown "$GITHUB_STEP_SUMMARY"` with the variable unset failed only after the verdict
    junit = tmp_path / "j.xml"
    missing = str(tmp_path / "missing.jsonl")
    assert main(["gate", "--baseline", missing, "--candidate", RESULTS, "--junit", str(junit), "--markdown", ""]) == 2
    err = capsys.readouterr().err
    assert one_line(err) == "evalkit: error: --markdown '': an empty path (an unset environment variable?)"
    assert (
        "--markdown &apos;&apos;: an empty path" in junit.read_text()
        or "--markdown '': an empty path" in junit.read_text()
    )


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))


def test_a_file_size_limit_is_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    proc = subprocess.run(
        [sys.executable, "-m", "evalkit", "report", RESULTS, "-o", str(out), "--format", "markdown"],
        capture_output=True,
        text=True,
        preexec_fn=_limit_file_size,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert one_line(proc.stderr).startswith(f"evalkit: error: report {out}: cannot write: File too large")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_rescore_never_renames_over_a_directory_or_a_special_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: tracebacks for the first two; a FIFO (or /dev/full, as root) was replaced by a regular file
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    paths = {str(fifo): "not a regular file", str(tmp_path / "folder"): "not a regular file"}
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("x")
    paths[str(tmp_path / "file.txt/out.jsonl")] = "is not a directory"
    for path, reason in paths.items():
        assert main(["rescore", RESULTS, "-o", path, "--scenarios", str(ROOT / "scenarios")]) == 2
        assert reason in one_line(capsys.readouterr().err)
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "file.txt", "folder"]


def test_import_into_a_path_under_a_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    (tmp_path / "file.txt").write_text("x")
    out = str(tmp_path / "file.txt/scenarios")
    assert main(["import", "bfcl", "--categories", "simple_python", "--sample", "1", "-o", out]) == 2
    assert "is not a directory" in one_line(capsys.readouterr().err)
