"""Writing a results file: whole lines only, cut back on a failed write, and what a resume reads back
(`finished_runs`, `truncate_partial_line`). The records themselves are in `evalkit.results.records`."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit._model import first_problem
from evalkit.errors import ResultsError
from evalkit.results.reader import json_line, supersedes
from evalkit.results.records import Header, RunRecord

__all__ = ["Finished", "Opener", "ResultsWriter", "finished_runs", "output_error", "truncate_partial_line"]


Opener = Callable[[Path, str], BinaryIO]


def _open_unbuffered(path: Path, mode: str) -> BinaryIO:
    # unbuffered: a record reaches the file when `write` returns, so a crash after it loses nothing
    return cast(BinaryIO, open(path, mode, buffering=0))


def output_error(path: Path, exc: OSError) -> ResultsError:
    """A one-line error for a results or recordings file that cannot be written (read-only, full)."""
    return ResultsError(
        f"{exc.filename or path}: cannot write: {exc.strerror or exc}; what was written before "
        "is intact: fix this, then continue with `run --resume`"
    )


class ResultsWriter:
    """Appends records to a results file, one whole line each, so an interruption loses nothing.

    Opening an existing file for a resume first cuts off a trailing partial line, so the next record
    starts on a line of its own. A write that fails (disk full) is cut back to the last whole line
    and the writer refuses further writes, so the file stays readable and resumable; a file it
    created and could not even write a header into is removed on close. `opener` is a
    seam for tests: it must return an unbuffered binary file (`write` may write part and raise).
    """

    def __init__(self, path: str | Path, *, append: bool = False, opener: Opener | None = None):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if append and self.path.exists():
                truncate_partial_line(self.path)
            # "xb" for a new file: two runs given the same output never write into each other's file
            self._fh = (opener or _open_unbuffered)(self.path, "ab" if append else "xb")
            self._good = self._fh.seek(0, os.SEEK_END)
        except OSError as exc:
            raise output_error(self.path, exc) from exc
        self.runs_written = 0
        self.broken = False
        self._created = not append

    def write(self, record: BaseModel) -> None:
        if self.broken:
            raise ResultsError(f"{self.path}: an earlier write failed; nothing more is written")
        data = (record.model_dump_json(exclude_none=False) + "\n").encode()
        try:
            view = memoryview(data)
            # an unbuffered write may take part of the line (a signal, a nearly full disk): write the rest
            while view:
                view = view[self._fh.write(view) or 0 :]
        except OSError as exc:
            self.broken = True
            # cutting back needs no space; the partial line must not stay for the next append
            with contextlib.suppress(OSError):
                self._fh.truncate(self._good)
            raise output_error(self.path, exc) from exc
        self._good += len(data)
        if isinstance(record, RunRecord):
            self.runs_written += 1

    def close(self) -> None:
        try:
            # a broken file's error was raised already: another one from fsync would only hide it
            if not self.broken:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise output_error(self.path, exc) from exc
        finally:
            self._fh.close()
            # a file this writer created and never wrote a line into (a start that failed) is no
            # results file: nothing of it is kept
            if self._created and self._good == 0:
                with contextlib.suppress(OSError):
                    self.path.unlink()


@dataclass
class Finished:
    """What a resume reads back from a results file (`finished_runs`)."""

    headers: list[Header]
    outcomes: dict[str, str]  # run id -> outcome of the record kept
    # run id -> (scenario id, scenario hash) of the record kept, for records that carry a hash
    versions: dict[str, tuple[str, str]] = field(default_factory=dict)


def finished_runs(path: Path) -> Finished:
    """For a resume: the file's headers, each recorded run id's outcome and scenario version.

    Reads the file line by line without building records, so a resume of a large file costs one
    pass and a small dict, not the file's records in memory.
    """
    found = Finished([], {})
    for lineno, line in enumerate(_lines(path), start=1):
        data = json_line(path, lineno, line)
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "header":
            found.headers.append(_parse_header(path, lineno, data))
        elif kind == "run":
            run = _run_keys(path, lineno, data)
            # the same rule as the reader's, so a resume re-runs exactly the runs a report would miss
            if supersedes(found.outcomes.get(run.run_id)):
                found.outcomes[run.run_id] = run.outcome
                # the kept record's version replaces the superseded one's, or there is none
                found.versions.pop(run.run_id, None)
                if run.scenario_hash is not None:
                    found.versions[run.run_id] = (run.cell.scenario, run.scenario_hash)
    if not found.headers:
        raise ResultsError(f"{path}: no header record: not an evalkit results file")
    return found


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _CellKey(_Lenient):
    scenario: str


class _RunKeys(_Lenient):
    """The fields of a run record a resume reads (the rest is left unvalidated: the report reads it)."""

    run_id: str
    outcome: str
    cell: _CellKey
    scenario_hash: str | None = None


def _run_keys(path: Path, lineno: int, data: dict[str, Any]) -> _RunKeys:
    try:
        return _RunKeys.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ResultsError(f"{path}:{lineno}: {problem.field}: {problem.message}") from exc


def _parse_header(path: Path, lineno: int, data: dict[str, Any]) -> Header:
    try:
        return Header.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(f"{path}:{lineno}: not a valid header record: {first_problem(exc).message}") from exc


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                # a last line without its newline is an interrupted write: the resume cuts it off
                if line.endswith("\n") and line.strip():
                    yield line
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc


def truncate_partial_line(path: Path) -> None:
    """Cut off a last line that an interrupted write left without its newline. Reads backwards from
    the end in blocks, so a resume of a large file does not read it whole."""
    with open(path, "r+b") as fh:
        end = fh.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            start = max(0, position - 65536)
            fh.seek(start)
            block = fh.read(position - start)
            # the file ends on a whole line: nothing to cut
            if position == end and block.endswith(b"\n"):
                return
            newline = block.rfind(b"\n")
            if newline >= 0:
                fh.truncate(start + newline + 1)
                return
            position = start
        # no newline anywhere: the only line is partial, and nothing of it is a record
        fh.truncate(0)
