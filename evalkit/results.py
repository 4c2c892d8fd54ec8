"""The append-only JSONL results file: its records, the writer and the reader.

A file is a sequence of JSON lines:

- a `header` (config, evalkit version, git sha, seed, backend provenance, start time); a resumed
  run appends another header with `resumed: true`;
- one `run` record per finished run, flushed as soon as the run ends;
- a `footer` when the runner stops (`status` is `complete` or `interrupted`).

Everything a report, a statistic or the gate shows is rebuilt from these records alone.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

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
    "load_results",
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
class Results:
    """Everything read from one or more results files (shards are merged in order)."""

    headers: list[Header] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    footers: list[Footer] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

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


def load_results(paths: Iterable[str | Path]) -> Results:
    """Read and merge results files.

    A run id seen twice keeps its first record, unless that record is an `infra_error`: a later
    record of the run (`run --resume --retry-infra` re-ran it) then takes its place.
    """
    results = Results()
    seen: dict[str, int] = {}
    for path in paths:
        results.paths.append(str(path))
        for record in iter_records(path):
            if isinstance(record, Header):
                results.headers.append(record)
            elif isinstance(record, Footer):
                results.footers.append(record)
            elif isinstance(record, RunRecord):
                at = seen.get(record.run_id)
                if at is None:
                    seen[record.run_id] = len(results.runs)
                    results.runs.append(record)
                elif results.runs[at].outcome == "infra_error":
                    results.runs[at] = record
    if not results.headers:
        raise ResultsError(f"{', '.join(results.paths)}: no header record: not an evalkit results file")
    return results


class ResultsWriter:
    """Appends records to a results file, one flushed line each, so an interruption loses nothing.

    Opening an existing file for a resume first cuts off a trailing partial line, so the next record
    starts on a line of its own.
    """

    def __init__(self, path: str | Path, *, append: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if append and self.path.exists():
            truncate_partial_line(self.path)
        self._fh: IO[str] = open(self.path, "a" if append else "x", encoding="utf-8")  # noqa: SIM115
        self.runs_written = 0

    def write(self, record: _Record) -> None:
        self._fh.write(record.model_dump_json(exclude_none=False) + "\n")
        self._fh.flush()
        if isinstance(record, RunRecord):
            self.runs_written += 1

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()


def truncate_partial_line(path: Path) -> None:
    """Cut off a last line that an interrupted write left without its newline."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)
