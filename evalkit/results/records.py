"""The append-only JSONL results file: its records, from which everything a report, a statistic or
the gate shows is rebuilt (the reader: `reader`; the writer: `writer`; what a reader hands on: `runs`).

A file is a sequence of JSON lines:

- a `header` (config, evalkit version, git sha, seed, backend provenance, start time); a resumed
  run appends another header with `resumed: true`;
- one `run` record per finished run, flushed as soon as the run ends;
- a `footer` when the runner stops: `status` is `complete`, `interrupted`, or `infra_errors` when
  more of a backend's runs than `max_infra_error_rate` were infra errors (`reason` says which).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Required, get_args

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_serializer,
)
from typing_extensions import TypedDict

from evalkit._model import StrictModel
from evalkit.chat import Completion, Message, Sampling, ToolMode, Usage

__all__ = [
    "FAILURE_CATEGORIES",
    "NOT_COUNTED",
    "Cell",
    "CheckItem",
    "Footer",
    "FooterStatus",
    "Header",
    "HeaderBackend",
    "HeaderConfig",
    "Intervention",
    "ItemKind",
    "ModelCall",
    "PhaseRestart",
    "Record",
    "RunHead",
    "RunRecord",
    "Served",
]

SCHEMA_VERSION = 3  # 2: records may carry `served` (a chain counted the calls); 3: `phase_restarts` too
Outcome = Literal[
    "final_answer",  # the model's answer to the last user turn was accepted
    "terminal_tool",  # the scenario's terminal tool was called
    "iteration_limit",  # the scenario's model-call budget ran out
    "escalated",  # a guard handed the run back to a human (Cline's mistake limit)
    "failed",  # a guard ended the run with an explicit failure (retry budget spent)
    "guard_fatal",  # a guard's error budget ran out and it declared the run lost (Forge's `fatal`)
    "runaway",  # an agent under test asked for more served model calls than its budget (`served.calls`)
    "time_limit",  # an agent under test outran its time limit on its own (no model call in flight)
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
    "degenerate_output",  # the reply is chat-template tokens or a loop of lines (evalkit.judge.degenerate)
    "iteration_limit",
    "escalated",
    "guard_fatal",
    "runaway",  # an agent under test went past its budget of served model calls (evalkit/agents/)
    "time_limit",
    "infra_error",
]
FAILURE_CATEGORIES: tuple[str, ...] = get_args(FailureCategory)
# outcomes that are no verdict on the model: never in a rate's denominator (`RunRecord.counted`)
NOT_COUNTED: frozenset[Outcome] = frozenset({"infra_error", "unsupported"})


class Record(StrictModel):
    """The base of every record in a results file and of their parts: strict (see `evalkit._model`)."""


class Cell(Record):
    """The matrix coordinates of a run. `backend` is the config's label for a backend entry."""

    backend: str
    model: str
    mode: ToolMode
    strategy: str
    scenario: str
    family: str

    def key(self) -> tuple[str, str, str, str, str]:
        return (self.backend, self.model, self.mode, self.strategy, self.scenario)


class Intervention(Record):
    """A guard acted: it nudged, rescued, stripped, escalated, or chose a context."""

    strategy: str
    action: str  # retry | rescue | strip | accept | stop | prepare
    reason: str
    call_index: int


class ModelCall(Record):
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


ItemKind = Literal[
    "call",  # a required call was made (structural)
    "arguments",  # its arguments matched
    "call_count",  # exactly `count` calls with matching arguments
    "forbidden_call",  # a forbidden tool was never called (structural)
    "extra_calls",  # no calls beyond the required ones
    "any_call",  # a call of one of the `any_of` tools (structural)
    "terminal_call",  # the scenario's terminal tool was called (structural)
    "terminal_facts",  # the terminal call's arguments mention the facts
    "no_tool_calls",  # no tool was called at all (structural)
    "reply",  # a final reply was given (structural)
    "reply_mentions",
    "reply_avoids",
    "asks_user",  # the reply asks the user a question (structural)
    "question_mentions",
    "not_degenerate",  # the reply is not template debris or a loop (structural)
    "state",  # stateful mocks reached the reference's state
    "state_results",  # the reference's results are among the model's
]


class CheckItem(Record):
    """One item of a scenario's success check. Structural items decide `completed`; the failure
    category is decided from `kind` (and `turn`), never from the label `item`, which is for people.
    Records written before `kind` existed have none."""

    item: str
    passed: bool
    structural: bool
    detail: str = ""
    kind: ItemKind | None = None
    turn: int | None = None  # 0-based turn of a per-turn check; None for the run's own check


class Served(Record):
    """What the model server behind a chain of server phases served one run, counted between it and
    the guard proxy in front of it (evalkit/backends/passthrough.py): the model's calls (those answered
    with an HTTP error among them), their tokens and the time the model server took."""

    calls: int
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0


class PhaseRestart(Record):
    """A server phase (`forge[1]`: a guard proxy in chain 1) that exited while this run held its chain,
    its exit code, and whether it was started again. A crashing guard is a finding."""

    phase: str
    exit_code: int | None
    started: bool


class RunHead(Record):
    """A run record without its transcript: every field a statistic, a report's table or the gate
    reads. `RunRecord` adds the transcript; the run table (`evalkit.results.table`) holds heads only."""

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
    # a hash of the scenario as judged (`run.matrix.scenario_hash`); None in older files: version unknown
    scenario_hash: str | None = None
    # the model server's own count behind a chain of phases (a guard proxy); None elsewhere and in older files
    served: Served | None = None
    # the server phases that exited during this run (empty elsewhere, and in files written before)
    phase_restarts: list[PhaseRestart] = Field(default_factory=list)

    @property
    def counted(self) -> bool:
        """Whether the run counts in rate denominators (infra errors and unsupported cells do not)."""
        return self.outcome not in NOT_COUNTED


class RunRecord(RunHead):
    """A whole run record: its head and its transcript. The transcript's fields come last, as the
    writer has always written them."""

    check: list[CheckItem] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    calls: list[ModelCall] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)

    @property
    def prepared(self) -> list[Intervention]:
        """The choices guards made while preparing requests (`action: prepare`), which a report tallies."""
        return [i for i in self.interventions if i.action == "prepare"]


class HeaderBackend(TypedDict, total=False):
    """A `backends:` entry of a header's config: its label is what the runs' cells name."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    label: Required[str]


class HeaderConfig(TypedDict, total=False):
    """The run config a header records, as the readers of a results file use it (the report's row and
    column order, the guard stacks `rescore` and `plan --profile` rebuild): those keys are typed, so a
    hand-edited `modes: null` is an error naming `config.modes`, not a crash where it is read. Every
    other key is kept as written."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]

    name: str
    backends: list[HeaderBackend]
    modes: list[str]
    strategies: dict[str, list[Any]]
    sampling: dict[str, Any] | None
    scenarios: list[str]
    allow_state_modules: list[str]


def _checked_as_written(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """The config checked as a `HeaderConfig`, and kept as written (its keys in their order), so that a
    header copied by `merge` or `rescore` reads as the run wrote it."""
    handler(value)
    return value


class Header(Record):
    type: Literal["header"] = "header"
    # A reader refuses a version it does not know rather than misread it; a version that changes the
    # records adds its migration here (1 to 2 and 2 to 3 need none: the new fields' defaults).
    schema_version: int = SCHEMA_VERSION

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if not 1 <= version <= SCHEMA_VERSION:
            raise ValueError(f"results format version {version}: this evalkit reads versions 1 to {SCHEMA_VERSION}")
        return version

    evalkit_version: str
    git_sha: str | None
    started_at: str
    config_name: str
    config_hash: str
    config: Annotated[HeaderConfig, WrapValidator(_checked_as_written)]
    seed: int
    runs_per_cell: int
    simulated: bool
    backends: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # the package behind a guard that runs someone else's code, by strategy (forge: version, wheel, hashes)
    guards: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # each agent under test, by its config label: name, version and install hash (evalkit/agents/)
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict)
    resumed: bool = False
    rescored: dict[str, Any] | None = None  # set by `evalkit rescore`: when, evalkit version, git sha
    shard: str | None = None  # "i/n" when the run covered one shard of the plan (`run --shard`)


FooterStatus = Literal["complete", "interrupted", "infra_errors"]


class Footer(Record):
    type: Literal["footer"] = "footer"
    finished_at: str
    status: FooterStatus
    runs_written: int
    reason: str | None = None  # with `infra_errors`: the backends past the limit, one line

    @model_serializer(mode="wrap")
    def _no_empty_reason(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A footer without a reason is written as before there was one: earlier readers read it."""
        dumped: dict[str, Any] = handler(self)
        if dumped.get("reason") is None:
            dumped.pop("reason", None)
        return dumped
