"""The runner as a writer: records stream as runs finish, signals stop it cleanly, one writer per
file, and a disk that refuses writes gives a one-line error with a resumable file."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
from pathlib import Path
from typing import BinaryIO

import pytest

from evalkit.backends.recording import prune_unfinished
from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.integrity import check_integrity
from evalkit.results.lock import OutputLock
from evalkit.results.reader import load_results
from evalkit.run.runner import run_config
from tests.run.test_runner import SCENARIOS, config


def _recorded_run_ids(rec: Path) -> set[str]:
    path = rec / "sim" / "recordings.jsonl"
    if not path.exists():
        return set()
    return {json.loads(line)["run_id"] for line in path.read_text().splitlines()}


def test_sim_records_reach_the_file_as_runs_finish_not_in_a_burst_at_the_end(tmp_path):
    # before: 0 of 5,100 records on disk while the runs went on; the recordings show
    # how many runs have started when each record is written
    rec, out = tmp_path / "rec", tmp_path / "r.jsonl"
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        on_disk = sum(1 for line in out.read_text().splitlines() if '"type":"run"' in line)
        seen.append((done, on_disk, len(_recorded_run_ids(rec))))

    run_config(config(), out, record_dir=rec, progress=progress)
    assert len(seen) == 48
    assert all(on_disk == done for done, on_disk, _ in seen)
    assert all(started <= done + 8 for done, _, started in seen)  # concurrency 8: O(concurrency) in flight


def test_sigint_while_records_are_written_stops_the_run_with_an_interrupted_footer(tmp_path):
    # before: a SIGINT during the write burst was ignored (exit 0, every run written)
    out = tmp_path / "r.jsonl"

    def progress(done: int, total: int) -> None:
        if done == 10:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        run_config(config(), out, progress=progress)
    cut = load_results([out])
    assert cut.footers[-1].status == "interrupted"
    assert 10 <= cut.footers[-1].runs_written == len(cut.runs) < 48
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handlers given back
    run_config(config(), out, resume=True)
    full = load_results([run_config(config(), tmp_path / "full.jsonl")])
    resumed = load_results([out])
    assert sorted((r.run_id, r.correct) for r in resumed.runs) == sorted((r.run_id, r.correct) for r in full.runs)
    assert not check_integrity(resumed)


def test_sigterm_stops_the_run_the_same_way(tmp_path):
    out = tmp_path / "r.jsonl"

    def progress(done: int, total: int) -> None:
        if done == 5:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(KeyboardInterrupt):
        run_config(config(), out, progress=progress)
    assert load_results([out]).footers[-1].status == "interrupted"


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    out = tmp_path / "r.jsonl"
    holder = OutputLock(out)
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match=f"in use by another evalkit run \\(PID {os.getpid()}\\)"):
            run_config(config(), out)
        assert not out.exists()
    finally:
        holder.release()
    run_config(config(), out)
    assert not Path(f"{out}.lock").exists()  # the lock file goes with its run


def test_the_recordings_directory_is_locked_too(tmp_path):
    holder = OutputLock(tmp_path / "rec")
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match="rec is in use"):
            run_config(config(), tmp_path / "r.jsonl", record_dir=tmp_path / "rec")
    finally:
        holder.release()


def test_a_truncated_last_recording_does_not_break_resume_record(tmp_path):
    # before: JSONDecodeError traceback from prune_unfinished
    rec, out = tmp_path / "rec", tmp_path / "r.jsonl"
    run_config(config(), out, record_dir=rec)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:21]))  # killed after 20 runs, in the middle of a recording line
    recordings = rec / "sim" / "recordings.jsonl"
    text = recordings.read_text()
    recordings.write_text(text[: len(text) - 40])
    run_config(config(), out, resume=True, record_dir=rec)
    assert all(json.loads(line) for line in recordings.read_text().splitlines())
    assert _recorded_run_ids(rec) == {r.run_id for r in load_results([out]).runs}


def test_prune_unfinished_names_a_broken_line_in_the_middle(tmp_path):
    (tmp_path / "recordings.jsonl").write_text('{"run_id": "a"}\n{"run_id": \n{"run_id": "b"}\n')
    with pytest.raises(ResultsError, match=r"recordings\.jsonl:2: not JSON"):
        prune_unfinished(tmp_path, {"a", "b"})


class FullDisk(io.RawIOBase):
    """A results file on a disk with `room` bytes left: the write that crosses it is partly done,
    then fails with ENOSPC, as `write(2)` on a full disk."""

    def __init__(self, path: Path, mode: str, room: int):
        self.inner = open(path, mode, buffering=0)  # noqa: SIM115
        self.room = room

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if len(data) > self.room:
            self.inner.write(bytes(data[: self.room]))
            self.room = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= len(data)
        return self.inner.write(data) or 0

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.inner.seek(offset, whence)

    def truncate(self, size: int | None = None) -> int:
        return self.inner.truncate(size)

    def fileno(self) -> int:
        return self.inner.fileno()

    def close(self) -> None:
        self.inner.close()
        super().close()


@pytest.mark.parametrize("room", [100, 60_000])
def test_a_full_disk_gives_one_line_and_resume_after_freeing_space_is_exact(tmp_path, room):
    # before: a raw OSError traceback; the file must stay valid and resume exact
    out = tmp_path / "r.jsonl"

    def opener(path: Path, mode: str) -> BinaryIO:
        return FullDisk(path, mode, room)  # type: ignore[return-value]

    with pytest.raises(ResultsError) as caught:
        run_config(config(), out, opener=opener)
    message = str(caught.value)
    assert "\n" not in message and "No space left on device" in message and "--resume" in message
    # no fragment left behind; a file that never got its header is not left to block the next run
    assert out.read_bytes().endswith(b"\n") if room > 1000 else not out.exists()
    run_config(config(), out, resume=True)
    resumed = load_results([out])
    assert len(resumed.runs) == 48 and resumed.duplicates == 0
    assert not [p for p in check_integrity(resumed) if p.severity == "error"]


def test_an_unwritable_output_is_a_one_line_error_at_the_command_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"name: c\nscenarios: ['{SCENARIOS}']\nfamilies: [casual_greeting]\n"
        "backends: [{label: s, kind: sim, model: small-local}]\nstrategies: {t: [trust_text]}\n"
    )
    assert main(["run", str(cfg), "-o", str(blocker / "r.jsonl"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err and "Traceback" not in err
