"""The append-only JSONL results file: its records, the writer and the reader.

A file is a sequence of JSON lines:

- a `header` (config, evalkit version, git sha, seed, backend provenance, start time); a resumed
  run appends another header with `resumed: true`;
- one `run` record per finished run, flushed as soon as the run ends;
- a `footer` when the runner stops (`status` is `complete` or `interrupted`).

Everything a report, a statistic or the gate shows is rebuilt from these records alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.chat import Completion, Message, Sampling, ToolMode, Usage
from evalkit.errors import ResultsError

__all__ = [
    "FAILURE_CATEGORIES",
    "Cell",
    "CheckItem",
    "Footer",
    "Header",
    "Intervention",
    "ModelCall",
    "Results",
    "ResultsWriter",
    "RunRecord",
    "Segment",
    "finished_runs",
    "load_results",
    "output_error",
    "truncate_partial_line",
]

SCHEMA_VERSION = 1

Outcome = Literal[
    "final_answer",  # the model's answer to the last user turn was accepted
    "terminal_tool",  # the scenario's terminal tool was called
    "iteration_limit",  # the scenario's model-call budget ran out
    "escalated",  # a guard handed the run back to a human (Cline's mistake limit)
    "failed",  # a guard ended the run with an explicit failure (retry budget spent)
    "infra_error",  # the backend stayed broken: excluded from rates, counted apart
    "unsupported",  # the backend cannot do what this cell's mode or strategy needs
]

FailureCategory = Literal[
    "text_instead_of_tool",
    "malformed_call",
    "hallucinated_tool",
    "wrong_arguments",
    "premature_answer",
    "unneeded_tool_call",
    "wrong_answer",
    "degenerate_output",  # the reply is chat-template tokens or a loop of lines (evalkit.degenerate)
    "iteration_limit",
    "escalated",
    "infra_error",
]
FAILURE_CATEGORIES: tuple[str, ...] = FailureCategory.__args__  # type: ignore[attr-defined]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cell(_Record):
    """The matrix coordinates of a run. `backend` is the config's label for a backend entry."""

    backend: str
    model: str
    mode: ToolMode
    strategy: str
    scenario: str
    family: str

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.backend, self.model, self.mode, self.strategy, self.scenario)


class Intervention(_Record):
    """A guard acted: it nudged, rescued, stripped, escalated, or chose a context."""

    strategy: str
    action: str  # retry | rescue | strip | accept | stop | prepare
    reason: str
    call_index: int


class ModelCall(_Record):
    """One model call: what was asked (in summary) and what came back."""

    index: int
    n_messages: int
    tools: list[str]
    tool_choice: str | None
    constraint: str | None  # "grammar:<sha256[:12]>" or "json_schema:<sha256[:12]>"
    completion: Completion
    decision: str  # execute | accept | retry | stop
    backend_retries: int = 0
    # the system message as sent, when it differs from the transcript's (prompt mode appends the tool
    # descriptions) and from the previous call's: the report shows the exact request
    system_sent: str | None = None


class CheckItem(_Record):
    """One item of a scenario's success check. Structural items decide `completed`."""

    item: str
    passed: bool
    structural: bool
    detail: str = ""


class RunRecord(_Record):
    type: Literal["run"] = "run"
    run_id: str
    cell: Cell
    index: int
    seed: int
    simulated: bool
    outcome: Outcome
    completed: bool
    correct: bool
    failure: FailureCategory | None
    first_try: bool
    retries: int
    guard_fires: int
    model_calls: int
    iterations: int
    ideal_iterations: int
    wasted_calls: int
    usage: Usage
    latency_s: float
    wall_s: float
    sampling: Sampling
    error: str | None = None
    check: list[CheckItem] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)

    @property
    def counted(self) -> bool:
        """Whether the run counts in rate denominators (infra errors and unsupported cells do not)."""
        return self.outcome not in ("infra_error", "unsupported")


class Header(_Record):
    type: Literal["header"] = "header"
    schema_version: int = SCHEMA_VERSION
    evalkit_version: str
    git_sha: str | None
    started_at: str
    config_name: str
    config_hash: str
    config: dict[str, Any]
    seed: int
    runs_per_cell: int
    simulated: bool
    backends: dict[str, dict[str, Any]] = Field(default_factory=dict)
    resumed: bool = False
    rescored: dict[str, Any] | None = None  # set by `evalkit rescore`: when, evalkit version, git sha


class Footer(_Record):
    type: Literal["footer"] = "footer"
    finished_at: str
    status: Literal["complete", "interrupted"]
    runs_written: int


@dataclass
class Segment:
    """One header..footer stretch of a file: what one invocation of `run` wrote."""

    path: str
    runs_present: int = 0
    footer: Footer | None = None


@dataclass
class Results:
    """Everything read from one or more results files (shards are merged in order).

    `segments`, `duplicates` and `conflicts` are what `check_integrity` needs: how many records
    each invocation left against what its footer counts, and the run ids recorded more than once.
    """

    headers: list[Header] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    footers: list[Footer] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[str] = field(default_factory=list)

    @property
    def simulated(self) -> bool:
        return any(h.simulated for h in self.headers) or any(r.simulated for r in self.runs)

    def run_ids(self) -> set[str]:
        return {r.run_id for r in self.runs}

    def to_frame(self) -> Any:
        """A pandas DataFrame with one flat row per run (no transcripts)."""
        import pandas as pd

        rows = [_flat_row(r) for r in self.runs]
        return pd.DataFrame(rows)


def _flat_row(run: RunRecord) -> dict[str, Any]:
    row: dict[str, Any] = dict(run.cell.model_dump())
    keep = ("run_id", "index", "seed", "simulated", "outcome", "completed", "correct", "failure",
            "first_try", "retries", "guard_fires", "model_calls", "iterations", "ideal_iterations",
            "wasted_calls", "latency_s", "wall_s", "error")
    row.update({k: getattr(run, k) for k in keep})
    row["prompt_tokens"] = run.usage.prompt_tokens
    row["completion_tokens"] = run.usage.completion_tokens
    row["counted"] = run.counted
    return row


_RECORD_TYPES: dict[str, type[_Record]] = {"header": Header, "run": RunRecord, "footer": Footer}


def _parse_line(path: str, lineno: int, line: str) -> _Record:
    try:
        data = json.loads(line)
        kind = data.get("type") if isinstance(data, dict) else None
        model = _RECORD_TYPES.get(str(kind))
        if model is None:
            raise ResultsError(f"{path}:{lineno}: not an evalkit record (type {kind!r})")
        return model.model_validate(data)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ResultsError(f"{path}:{lineno}: {where}: {first['msg']}") from exc


def iter_records(path: str | Path) -> Iterator[_Record]:
    """Records of one file. A last line cut short by an interruption is skipped, not an error."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc
    partial_tail = lines[-1] != ""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if partial_tail and lineno == len(lines):
            warnings.warn(f"{path}:{lineno}: skipping a record cut short by an interruption", stacklevel=2)
            return
        yield _parse_line(path, lineno, line)


def _verdict(run: RunRecord) -> tuple[str, bool, bool, str | None]:
    return (run.outcome, run.completed, run.correct, run.failure)


def load_results(paths: Iterable[str | Path]) -> Results:
    """Read and merge results files.

    A run id seen twice keeps its first record, unless that record is an `infra_error`: a later
    record of the run (`run --resume --retry-infra` re-ran it) then takes its place. Any other
    repeat is counted in `duplicates`, and listed in `conflicts` when its verdict differs.
    """
    results = Results()
    seen: dict[str, int] = {}
    for path in paths:
        results.paths.append(str(path))
        segment: Segment | None = None
        for record in iter_records(path):
            if isinstance(record, Header):
                results.headers.append(record)
                segment = Segment(str(path))
                results.segments.append(segment)
            elif isinstance(record, Footer):
                results.footers.append(record)
                if segment is not None:
                    segment.footer = record
                    segment = None
            elif isinstance(record, RunRecord):
                if segment is not None:
                    segment.runs_present += 1
                at = seen.get(record.run_id)
                if at is None:
                    seen[record.run_id] = len(results.runs)
                    results.runs.append(record)
                elif results.runs[at].outcome == "infra_error":
                    results.runs[at] = record
                else:
                    results.duplicates += 1
                    if _verdict(results.runs[at]) != _verdict(record):
                        results.conflicts.append(
                            f"{record.run_id} ({results.runs[at].outcome} then {record.outcome})")
    if not results.headers:
        raise ResultsError(f"{', '.join(results.paths)}: no header record: not an evalkit results file")
    return results


Opener = Callable[[Path, str], BinaryIO]


def _open_unbuffered(path: Path, mode: str) -> BinaryIO:
    return cast(BinaryIO, open(path, mode, buffering=0))


def output_error(path: Path, exc: OSError) -> ResultsError:
    """A one-line error for a results or recordings file that cannot be written (read-only, full)."""
    return ResultsError(f"{exc.filename or path}: cannot write: {exc.strerror or exc}; what was written before "
                        "is intact: fix this, then continue with `run --resume`")


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
            self._fh = (opener or _open_unbuffered)(self.path, "ab" if append else "xb")
            self._good = self._fh.seek(0, os.SEEK_END)
        except OSError as exc:
            raise output_error(self.path, exc) from exc
        self.runs_written = 0
        self.broken = False
        self._created = not append

    def write(self, record: _Record) -> None:
        if self.broken:
            raise ResultsError(f"{self.path}: an earlier write failed; nothing more is written")
        data = (record.model_dump_json(exclude_none=False) + "\n").encode()
        try:
            view = memoryview(data)
            while view:
                view = view[self._fh.write(view) or 0:]
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
            if not self.broken:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise output_error(self.path, exc) from exc
        finally:
            self._fh.close()
            if self._created and self._good == 0:
                with contextlib.suppress(OSError):
                    self.path.unlink()


def finished_runs(path: Path) -> tuple[list[Header], dict[str, str]]:
    """For a resume: the file's headers and each recorded run id's outcome.

    Reads the file line by line without building records, so a resume of a large file costs one
    pass and a small dict, not the file's records in memory.
    """
    headers: list[Header] = []
    outcomes: dict[str, str] = {}
    for lineno, line in enumerate(_lines(path), start=1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "header":
            headers.append(_parse_header(path, lineno, data))
        elif kind == "run":
            previous = outcomes.get(data["run_id"])
            if previous is None or previous == "infra_error":
                outcomes[data["run_id"]] = str(data.get("outcome"))
    if not headers:
        raise ResultsError(f"{path}: no header record: not an evalkit results file")
    return headers, outcomes


def _parse_header(path: Path, lineno: int, data: dict[str, Any]) -> Header:
    try:
        return Header.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(f"{path}:{lineno}: not a valid header record: {exc.errors()[0]['msg']}") from exc


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.endswith("\n") and line.strip():
                    yield line
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc


def truncate_partial_line(path: Path) -> None:
    """Cut off a last line that an interrupted write left without its newline."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)
