"""`evalkit merge` as a writer: it holds the output lock, writes whole or nothing, and refuses what
`report` refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO

import pytest

from evalkit.errors import ResultsError
from evalkit.results.integrity import load_checked
from evalkit.results.lock import OutputLock
from evalkit.results.merge import merge_results
from evalkit.results.reader import load_results
from evalkit.results.shards import Shard
from evalkit.run.runner import run_config
from tests.run.test_runner import config
from tests.run.test_runner_writes import FullDisk


@pytest.fixture
def shards(tmp_path: Path) -> list[Path]:
    return [run_config(config(), tmp_path / f"s{i}.jsonl", shard=Shard(i, 2)) for i in (1, 2)]


def test_merge_refuses_an_output_another_writer_holds(tmp_path, shards):
    out = tmp_path / "all.jsonl"
    holder = OutputLock(out)
    holder.acquire()
    try:
        with pytest.raises(ResultsError, match=f"in use by another evalkit run \\(PID {os.getpid()}\\)"):
            merge_results(shards, out)
        assert not out.exists()
    finally:
        holder.release()
    merge_results(shards, out)
    assert len(load_results([out]).runs) == 48
    assert not Path(f"{out}.lock").exists()


def _leftovers(folder: Path, shards: list[Path]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p not in shards)


def test_merge_on_a_full_disk_leaves_no_output_and_says_to_merge_again(tmp_path, shards):
    # before: a partial merged file, and the advice to continue it with `run --resume`
    out = tmp_path / "all.jsonl"

    def opener(path: Path, mode: str) -> BinaryIO:
        return FullDisk(path, mode, 20_000)  # type: ignore[return-value]

    with pytest.raises(ResultsError) as caught:
        merge_results(shards, out, opener=opener)
    message = str(caught.value)
    assert "No space left on device" in message and "\n" not in message
    assert "--resume" not in message and "merge" in message
    assert _leftovers(tmp_path, shards) == []
    merge_results(shards, out)  # once there is room, the same merge succeeds
    assert len(load_results([out]).runs) == 48


class _Interrupted(FullDisk):
    """A file whose third write is interrupted by Ctrl-C."""

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.room -= 1
        if self.room == 0:
            raise KeyboardInterrupt
        return self.inner.write(data) or 0


def test_an_interrupted_merge_leaves_no_output(tmp_path, shards):
    out = tmp_path / "all.jsonl"

    def opener(path: Path, mode: str) -> BinaryIO:
        return _Interrupted(path, mode, 3)  # type: ignore[return-value]

    with pytest.raises(KeyboardInterrupt):
        merge_results(shards, out, opener=opener)
    assert _leftovers(tmp_path, shards) == []


def _edit(path: Path, target: Path, change) -> Path:  # type: ignore[no-untyped-def]
    lines = path.read_text().splitlines()
    target.write_text("\n".join(change(lines)) + "\n")
    return target


def _doubled(lines: list[str]) -> list[str]:
    return [*lines[:2], lines[1], *lines[2:]]  # a run line written twice


def _conflicting(lines: list[str]) -> list[str]:
    first = json.loads(lines[1])
    first.update(correct=not first["correct"], completed=True, failure=None if not first["correct"] else "wrong_answer")
    return [*lines[:2], json.dumps(first), *lines[2:]]


def _miscounted(lines: list[str]) -> list[str]:
    footer = json.loads(lines[-1])
    footer["runs_written"] += 3
    return [*lines[:-1], json.dumps(footer)]


def _contradicts_itself(lines: list[str]) -> list[str]:
    record = json.loads(lines[1])
    record.update(completed=False, correct=True, failure=None)
    return [lines[0], json.dumps(record), *lines[2:]]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_doubled, "another process wrote into the file"),
        (_conflicting, "recorded twice with different verdicts"),
        (_miscounted, "records were removed"),
        (_contradicts_itself, "correct but not completed"),
    ],
)
def test_merge_refuses_what_report_refuses(tmp_path, shards, change, says):
    # before: merge copied each of these into the merged file; report refused it
    bad = _edit(shards[0], tmp_path / "bad.jsonl", change)
    with pytest.raises(ResultsError, match=says):
        load_checked([bad], warn=lambda _: None)
    with pytest.raises(ResultsError, match=says):
        merge_results([bad, shards[1]], tmp_path / "all.jsonl")
    assert not (tmp_path / "all.jsonl").exists()
