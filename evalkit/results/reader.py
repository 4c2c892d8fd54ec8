"""Reading results files: one line into its record, a file into records, files into one `Results`.

A run id seen in several records keeps one of them by one rule (`supersedes`), which the writer's
resume and `merge` ask too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, overload

from pydantic import ValidationError
from pydantic_core import from_json

from evalkit._model import first_problem
from evalkit.errors import ResultsError
from evalkit.results.records import Footer, Header, RunRecord
from evalkit.results.runs import Results, RunRow, Segment

__all__ = ["MAX_NESTING", "RunReader", "iter_records", "json_line", "load_results", "parse_record", "supersedes"]

_log = logging.getLogger(__name__)

# How deep a results line may nest: the limit of pydantic-core's JSON parser, which reads every line
# (the writer's run lines through the record models, any other line through `json_line`). It parses
# without Python recursion, so a line nested 100,000 deep is an error naming the line, never a
# RecursionError; what the runner writes stays within it (`evalkit.chat.parse_arguments`).
MAX_NESTING = 200

_RECORD_TYPES: dict[str, type[Header] | type[RunRecord] | type[Footer]] = {
    "header": Header,
    "run": RunRecord,
    "footer": Footer,
}

# what a `RunReader` makes of a run line: a row, maybe without the transcript
R = TypeVar("R", bound=RunRow)
T = TypeVar("T", bound=Results[RunRow])
RunParser = Callable[[str, int, str], R]


def json_line(path: str | Path, lineno: int, line: str) -> Any:
    """One results line's JSON value; a `ResultsError` naming the line when it is not JSON, holds a
    number Python cannot hold, or nests deeper than `MAX_NESTING`."""
    try:
        return from_json(line)
    except ValueError as exc:
        raise ResultsError(f"{path}:{lineno}: not JSON: {exc}") from None


@overload
def parse_record(path: str, lineno: int, line: str) -> Header | RunRecord | Footer: ...


@overload
def parse_record(
    path: str, lineno: int, line: str, parse_run: RunParser[R] | None
) -> Header | RunRecord | Footer | R: ...


def parse_record(
    path: str, lineno: int, line: str, parse_run: RunParser[R] | None = None
) -> Header | RunRecord | Footer | R:
    """One line's record; a `ResultsError` naming the line and field when it is not one.

    `parse_run` reads the writer's own run lines (by default: the whole record, validated from JSON
    in one step); when it raises a `ValidationError`, the general path finds the field to name."""
    # the writer's own run lines start so: validated straight from the JSON text, the fast path
    if line.startswith('{"type":"run"'):
        try:
            return parse_run(path, lineno, line) if parse_run else RunRecord.model_validate_json(line)
        except ValidationError:
            # read again below, the slow way, which can name the field that is wrong
            pass
    data = json_line(path, lineno, line)
    kind = data.get("type") if isinstance(data, dict) else None
    model = _RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ResultsError(f"{path}:{lineno}: not an evalkit record (type {_short(kind)})")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ResultsError(f"{path}:{lineno}: {problem.field}: {problem.message}") from exc


def _short(value: Any) -> str:
    # the value is data from the file: a scalar shown short, anything else only by its type
    text = repr(value) if isinstance(value, str | int | float | bool) or value is None else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def iter_records(path: str | Path, parse_run: RunParser[R] | None = None) -> Iterator[Header | RunRecord | Footer | R]:
    """Records of one file, read line by line (`parse_run`: see `parse_record`). A last line cut
    short by an interruption is skipped, not an error."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.isspace():  # not `strip()`: that copies every line
                    continue
                if not line.endswith("\n"):
                    # a log record, not a Python warning (that would show this module's path): the CLI
                    # shows it as one line, `evalkit: warning: ...`; a library user's logging decides
                    _log.warning(
                        "%s:%d: the last record is cut short (an interrupted write) and is skipped", path, lineno
                    )
                    return
                yield parse_record(path, lineno, line, parse_run)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc


def _verdict(run: RunRecord) -> tuple[str, bool, bool, str | None]:
    return (run.outcome, run.completed, run.correct, run.failure)


class RunReader(Protocol):
    """How `load_results` reads run lines and stores them (`evalkit.results.scan`): it takes every
    run it reads, in order, and resolves repeated run ids itself (with `supersedes`)."""

    def parse(self, path: str, lineno: int, line: str) -> RunRow:
        """A run line as the writer wrote it; may raise `ValidationError` (then the line is read whole)."""

    def store(self, run: RunRow) -> None:
        """Each run record read (from `parse`, or read whole)."""

    def finish(self) -> tuple[Sequence[RunRow], int, list[str]]:
        """The runs kept, the repeats left out, and the repeats whose verdict differed."""


def supersedes(kept_outcome: str | None) -> bool:
    """Whether a later record of a run id takes the place of the record kept so far (of outcome
    `kept_outcome`; None when there is none). Only an `infra_error` is superseded: the run was re-run
    (`run --resume --retry-infra`, or another shard). The reader, the resume and `merge` all ask this."""
    return kept_outcome is None or kept_outcome == "infra_error"


@overload
def load_results(paths: Iterable[str | Path]) -> Results[RunRecord]: ...


@overload
def load_results(paths: Iterable[str | Path], reader: RunReader) -> Results[RunRow]: ...


def load_results(paths: Iterable[str | Path], reader: RunReader | None = None) -> Results[RunRow]:
    """Read and merge results files.

    A run id seen twice keeps its first record, unless that record is an `infra_error`: a later
    record of the run (`run --resume --retry-infra` re-ran it) then takes its place. Any other
    repeat is counted in `duplicates`, and listed in `conflicts` when its verdict differs.
    By default `runs` holds whole records; a `reader` decides what is read and stored instead.
    """
    if reader is None:
        whole: Results[RunRecord] = Results()
        whole.runs, whole.duplicates, whole.conflicts = _kept(_runs(paths, whole, None))
        return _with_header(whole)
    rows: Results[RunRow] = Results()
    for run in _runs(paths, rows, reader.parse):
        reader.store(run)
    rows.runs, rows.duplicates, rows.conflicts = reader.finish()
    return _with_header(rows)


def _runs(
    paths: Iterable[str | Path], results: Results[RunRow], parse_run: RunParser[R] | None
) -> Iterator[R | RunRecord]:
    """The run records (or rows, from `parse_run`) of the files in order; their headers, footers
    and segments go into `results`."""
    for path in paths:
        results.paths.append(str(path))
        segment: Segment | None = None
        for record in iter_records(path, parse_run):
            if isinstance(record, Header):
                results.headers.append(record)
                segment = Segment(str(path))
                results.segments.append(segment)
            elif isinstance(record, Footer):
                results.footers.append(record)
                if segment is not None:
                    segment.footer = record
                    segment = None
            else:
                if segment is not None:
                    segment.runs_present += 1
                yield record


def _kept(records: Iterable[RunRecord]) -> tuple[list[RunRecord], int, list[str]]:
    """One record per run id (see `load_results`); the repeats left out, and those whose verdict differed."""
    seen: dict[str, int] = {}
    runs: list[RunRecord] = []
    duplicates, conflicts = 0, []
    for record in records:
        at = seen.get(record.run_id)
        if at is None:
            seen[record.run_id] = len(runs)
            runs.append(record)
        elif supersedes(runs[at].outcome):
            runs[at] = record
        else:
            duplicates += 1
            if _verdict(runs[at]) != _verdict(record):
                conflicts.append(f"{record.run_id} ({runs[at].outcome} then {record.outcome})")
    return runs, duplicates, conflicts


def _with_header(results: T) -> T:
    if not results.headers:
        raise ResultsError(f"{', '.join(results.paths)}: no header record: not an evalkit results file")
    return results
