"""The append-only JSONL results file: its records and the reader (the writer: `results_writer`).

A file is a sequence of JSON lines:

- a `header` (config, evalkit version, git sha, seed, backend provenance, start time); a resumed
  run appends another header with `resumed: true`;
- one `run` record per finished run, flushed as soon as the run ends;
- a `footer` when the runner stops (`status` is `complete` or `interrupted`).

Everything a report, a statistic or the gate shows is rebuilt from these records alone.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

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
    "RunReader",
    "RunRecord",
    "Segment",
    "load_results",
    "parse_record",
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
    shard: str | None = None  # "i/n" when the run covered one shard of the plan (`run --shard`)


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
    `transcripts` is None when `runs` are whole records (`load_results`); `evalkit.scan` sets it to
    the few whole records it kept per cell key, its `runs` then being rows without transcripts.
    """

    headers: list[Header] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    footers: list[Footer] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    duplicates: int = 0
    conflicts: list[str] = field(default_factory=list)
    transcripts: dict[tuple[str, ...], list[RunRecord]] | None = None
    transcript_limit: int = 0  # with `transcripts`: the most failed runs per cell a drill-down may show

    @property
    def simulated(self) -> bool:
        return any(h.simulated for h in self.headers) or any(r.simulated for r in self.runs)

    def whole(self, runs: list[RunRecord], failed: int) -> list[RunRecord]:
        """The records of one cell's `runs` with their transcripts: all of them, or the sample kept,
        which holds what a drill-down showing up to `failed` failed runs needs."""
        if self.transcripts is None or not runs:
            return runs
        if failed > self.transcript_limit:
            raise ValueError(f"{failed} failed transcripts per cell asked, {self.transcript_limit} kept")
        return self.transcripts.get(runs[0].cell.key(), [])

    def run_ids(self) -> set[str]:
        return {r.run_id for r in self.runs}

    def to_frame(self) -> Any:
        """A pandas DataFrame with one flat row per run (no transcripts)."""
        import pandas as pd

        rows = [_flat_row(r) for r in self.runs]
        return pd.DataFrame(rows)


def _flat_row(run: RunRecord) -> dict[str, Any]:
    row: dict[str, Any] = dict(run.cell.model_dump())
    keep = (
        "run_id",
        "index",
        "seed",
        "simulated",
        "outcome",
        "completed",
        "correct",
        "failure",
        "first_try",
        "retries",
        "guard_fires",
        "model_calls",
        "iterations",
        "ideal_iterations",
        "wasted_calls",
        "latency_s",
        "wall_s",
        "error",
    )
    row.update({k: getattr(run, k) for k in keep})
    row["prompt_tokens"] = run.usage.prompt_tokens
    row["completion_tokens"] = run.usage.completion_tokens
    row["counted"] = run.counted
    return row


_RECORD_TYPES: dict[str, type[_Record]] = {"header": Header, "run": RunRecord, "footer": Footer}


RunParser = Callable[[str, int, str], RunRecord]


def parse_record(path: str, lineno: int, line: str, parse_run: RunParser | None = None) -> _Record:
    """One line's record; a `ResultsError` naming the line and field when it is not one.

    `parse_run` reads the writer's own run lines (by default: the whole record, validated from JSON
    in one step); when it raises a `ValidationError`, the general path finds the field to name."""
    if line.startswith('{"type":"run"'):
        try:
            return parse_run(path, lineno, line) if parse_run else RunRecord.model_validate_json(line)
        except ValidationError:
            pass
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


def iter_records(path: str | Path, parse_run: RunParser | None = None) -> Iterator[_Record]:
    """Records of one file, read line by line (`parse_run`: see `parse_record`). A last line cut
    short by an interruption is skipped, not an error."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.isspace():  # not `strip()`: that copies every line
                    continue
                if not line.endswith("\n"):
                    warnings.warn(f"{path}:{lineno}: skipping a record cut short by an interruption", stacklevel=2)
                    return
                yield parse_record(path, lineno, line, parse_run)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text") from exc


def _verdict(run: RunRecord) -> tuple[str, bool, bool, str | None]:
    return (run.outcome, run.completed, run.correct, run.failure)


class RunReader(Protocol):
    """How `load_results` reads run lines and what it stores of them (`evalkit.scan`)."""

    def parse(self, path: str, lineno: int, line: str) -> RunRecord:
        """A run line as the writer wrote it; may raise `ValidationError` (then the line is read whole)."""

    def keep(self, run: RunRecord) -> RunRecord:
        """Given each record that takes a place in `runs` (from `parse` or read whole): what is stored."""


def load_results(paths: Iterable[str | Path], reader: RunReader | None = None) -> Results:
    """Read and merge results files.

    A run id seen twice keeps its first record, unless that record is an `infra_error`: a later
    record of the run (`run --resume --retry-infra` re-ran it) then takes its place. Any other
    repeat is counted in `duplicates`, and listed in `conflicts` when its verdict differs.
    By default `runs` holds whole records; a `reader` decides what is read and stored instead.
    """
    results = Results()
    seen: dict[str, int] = {}
    for path in paths:
        results.paths.append(str(path))
        segment: Segment | None = None
        for record in iter_records(path, reader.parse if reader else None):
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
                    results.runs.append(reader.keep(record) if reader else record)
                elif results.runs[at].outcome == "infra_error":
                    results.runs[at] = reader.keep(record) if reader else record
                else:
                    results.duplicates += 1
                    if _verdict(results.runs[at]) != _verdict(record):
                        results.conflicts.append(f"{record.run_id} ({results.runs[at].outcome} then {record.outcome})")
    if not results.headers:
        raise ResultsError(f"{', '.join(results.paths)}: no header record: not an evalkit results file")
    return results
