"""What `evalkit.cli.main` changes in the process it runs in, and puts back: the SIGTERM handler (a
test's timeout signal once reached pytest through evalkit's) and the `evalkit` logger's handler
(library warnings are log records; only the CLI shows them, as `evalkit: warning: ...`)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.results.integrity import load_checked

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results/compare-models.jsonl"


def _cut(tmp_path: Path) -> Path:
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(RESULTS.read_bytes()[:-50])  # the last record cut mid-line, as a killed writer leaves it
    return cut


def _mine(signum: int, frame: object) -> None:
    raise AssertionError("not called")


@pytest.mark.parametrize("argv", [["list", "strategies"], ["validate", "no-such-file.yaml"]])
def test_the_sigterm_handler_after_main_is_the_one_before(argv: list[str]) -> None:
    before = signal.signal(signal.SIGTERM, _mine)
    try:
        main(argv)
        assert signal.getsignal(signal.SIGTERM) is _mine
    finally:
        signal.signal(signal.SIGTERM, before)


def test_main_leaves_the_evalkit_logger_as_it_found_it(tmp_path: Path) -> None:
    logger = logging.getLogger("evalkit")
    handlers = list(logger.handlers)
    main(["report", str(_cut(tmp_path)), "-o", str(tmp_path / "r.md"), "--format", "markdown"])
    assert logger.handlers == handlers


def test_a_library_warning_is_the_clis_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = _cut(tmp_path)
    assert main(["report", str(cut), "-o", str(tmp_path / "r.md"), "--format", "markdown"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "cut short" in line]
    assert lines == [f"evalkit: warning: {cut}:164: the last record is cut short (an interrupted write) and is skipped"]


def test_a_library_user_gets_the_warning_as_a_log_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = _cut(tmp_path)
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        load_checked([cut], transcripts=0)
    assert [(r.name, r.levelno) for r in caplog.records if "cut short" in r.getMessage()] == [
        ("evalkit.results.reader", logging.WARNING)
    ]
    assert "cut short" not in capsys.readouterr().err  # no handler of evalkit's own outside the CLI


def test_the_simulated_servers_records_speak_as_serve_sim() -> None:
    from evalkit.cli import _Said  # the CLI's formatter: what `evalkit serve sim` shows on its log

    record = logging.LogRecord("evalkit.serve_sim", logging.WARNING, __file__, 1, "no known scenario %r", ("hi",), None)
    assert _Said().format(record) == "evalkit serve sim: no known scenario 'hi'"
