"""The run records `load_results` keeps, one at a time: for a reader that needs every whole record once
(`export inspect` writes each as a sample) without holding them all.

`kept_runs` reads the files a line at a time and yields, whole, each run record `load_results` would keep
whose `wanted(cell)` holds: one record per run id, by the reader's one rule (`supersedes`: the first
record of a run id, unless it is an `infra_error` a later record takes the place of). A record whose place
a later one may still take (an infra error) is remembered by its position in the file and read again
after the last line, so memory holds a flag per run id and a position per such record, never a
transcript. Run lines are read through a model of the fields the rule needs (the transcript is skipped
by the JSON parser), and whole only when yielded.

The files are expected to have been read once already (`load_checked`: integrity, errors named by line):
a line that no longer reads is a `ResultsError` naming it (the file changed in between).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import ResultsError
from evalkit.results.reader import parse_record, supersedes
from evalkit.results.records import Cell, RunRecord

__all__ = ["kept_runs"]


class _Head(BaseModel):
    """What `supersedes` and `wanted` read of a line; every other field is skipped unread."""

    model_config = ConfigDict(extra="ignore")

    type: str
    run_id: str = ""
    outcome: str = ""
    cell: Cell | None = None


def _lines(path: str) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text) of each record line, as `iter_records` reads them: blank lines
    and a last line cut short (an interrupted write) are skipped."""
    try:
        # bytes, not text: a line's byte offset is what `_line_at` seeks to when it is read again
        with open(path, "rb") as fh:
            offset = 0
            for lineno, raw in enumerate(fh, start=1):
                at, offset = offset, offset + len(raw)
                if raw.isspace():
                    continue
                if not raw.endswith(b"\n"):
                    return
                yield lineno, at, raw.decode("utf-8")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc


def _line_at(path: str, offset: int) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            return fh.readline().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read again: {exc}") from exc


def _run(path: str, lineno: int, line: str) -> RunRecord:
    record = parse_record(path, lineno, line)
    if not isinstance(record, RunRecord):
        raise ResultsError(f"{path}:{lineno}: no longer a run record: the file changed while it was read")
    return record


def kept_runs(paths: Iterable[str | Path], wanted: Callable[[Cell], bool]) -> Iterator[RunRecord]:
    """Whole, each run record `load_results(paths)` keeps whose cell is `wanted` (see the module's docstring);
    those an infra error's later record could have replaced come after the others."""
    replaceable: dict[str, bool] = {}  # run id → whether a later record takes the place of the one kept
    pending: dict[str, tuple[str, int, int]] = {}  # run id → (path, line, offset) of a replaceable record
    for path in map(str, paths):
        for lineno, offset, line in _lines(path):
            try:
                head = _Head.model_validate_json(line)
            except ValidationError:
                raise ResultsError(f"{path}:{lineno}: no longer reads: the file changed while it was read") from None
            if head.type != "run" or head.cell is None:
                continue
            if replaceable.get(head.run_id) is False:
                continue  # a repeat of a run whose record is kept: `load_results` counts it, and drops it
            replaceable[head.run_id] = later = supersedes(head.outcome)
            # this record takes the place of the pending one, if any: only the latest may be kept
            pending.pop(head.run_id, None)
            if not wanted(head.cell):
                continue
            if later:
                pending[head.run_id] = (path, lineno, offset)
            else:
                yield _run(path, lineno, line)
    # after the last line no later record can take their place: these are kept
    for path, lineno, offset in pending.values():
        yield _run(path, lineno, _line_at(path, offset))
