"""Scenarios: one agent task each, with mocked tools, a reference solution and a success check.

The reference solution is what a *simulated* model may know about the task (its "skill"); the check
is what decides success. Loading validates everything up front and names the file, the field path
and the line of the first problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, ValidationError, ValidationInfo, field_validator, model_validator

from evalkit._model import StrictModel, first_problem
from evalkit._yaml import read_yaml
from evalkit.chat import Skill, ToolCall, ToolSpec
from evalkit.errors import ScenarioError
from evalkit.scenario.argument_specs import literal_problem, schema_problem, spec_vs_schema_problem
from evalkit.scenario.state_allowlist import StateAllowlist

__all__ = [
    "FAMILIES",
    "Check",
    "MockResult",
    "Scenario",
    "ToolDef",
    "load_scenario",
    "load_scenarios",
]

Family = Literal[
    "sequential_reasoning",
    "relevance_detection",
    "data_gap_recovery",
    "casual_greeting",
    "action_completion",
    "tool_selection",  # pick the right tool and fill its arguments (imported BFCL single-turn cases)
]
FAMILIES: tuple[str, ...] = Family.__args__  # type: ignore[attr-defined]
# a scenario may name a family of its own; a config that runs it declares it (custom_families)
_FAMILY_NAME = r"^[a-z][a-z0-9_]*$"

# Argument specs in `when` and in checks: literals or `$` operators ({$contains: x}, {$any_of: [...]},
# {$regex: ...}, ...), matched by evalkit.scenario.matching; checked against the tool's schema at load.
ArgSpec = dict[str, Any]


class MockResult(StrictModel):
    """A canned tool result: `returns` data or an `error`, for calls whose arguments match `when`."""

    when: ArgSpec = Field(default_factory=dict)
    returns: Any = None
    error: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> MockResult:
        if (self.returns is None) == (self.error is None):
            raise ValueError("give exactly one of 'returns' or 'error'")
        return self


class ToolDef(ToolSpec):
    """A tool offered to the model, with its mocked behaviour."""

    results: list[MockResult] = Field(default_factory=list)
    default: MockResult = Field(default_factory=lambda: MockResult(error="no data found for these arguments"))
    mutating: bool = False  # writes or edits something (the completion guard looks for these)

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)


class CallCheck(StrictModel):
    name: str
    arguments: ArgSpec = Field(default_factory=dict)
    # v2: whether arguments the spec does not name are allowed (optional and must-be-absent arguments
    # are the matcher's {$optional: spec} and {$absent: true}); `count`: exactly this many matching
    # calls (default: at least one)
    extra_arguments: Literal["allow", "forbid"] = "allow"
    count: int | None = Field(None, ge=1)


class CallsCheck(StrictModel):
    required: list[CallCheck] = Field(default_factory=list)
    order: Literal["ordered", "unordered"] = "ordered"
    forbidden: list[str] = Field(default_factory=list)
    # v2: `extra_calls: forbid` — no call beyond the required ones (required calls are matched
    # one-to-one, so the right call made twice fails); `any_of` — at least one valid call of any of
    # these tools (BFCL's live_relevance)
    extra_calls: Literal["allow", "forbid"] = "allow"
    any_of: list[str] = Field(default_factory=list)


class MatchCheck(StrictModel):
    """v2: how argument values compare, at every depth (evalkit.scenario.matching.MatchRules); strict types
    also hold every value to its tool's JSON Schema type (evalkit.judge.arguments)."""

    normalise: Literal["exact", "casefold", "bfcl"] = "casefold"
    strict_types: bool = False


class TerminalCheck(StrictModel):
    """The terminal tool's arguments must mention these facts (argument -> substrings)."""

    contains: dict[str, list[str]] = Field(default_factory=dict)


class ReplyCheck(StrictModel):
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)


class AsksUserCheck(StrictModel):
    """The final reply asks the user a question, mentioning any of `mentions` (the missing datum)."""

    mentions: list[str] = Field(default_factory=list)


class Check(StrictModel):
    calls: CallsCheck | None = None
    # v2, with `state:` mocks: after the turn (or the run), the mocks' state equals the state the
    # reference calls of all turns so far reach (BFCL's multi-turn acceptance: same state, any path)
    state_as_reference: bool = False
    terminal: TerminalCheck | None = None
    no_tool_calls: bool = False  # "only respond" is the same: respond is never a tool call here
    reply: ReplyCheck | None = None
    asks_user: AsksUserCheck | None = None
    match: MatchCheck | None = None  # v2; without it (and in v1 files) evalkit.scenario.matching's rules apply

    @model_validator(mode="after")
    def _not_empty(self) -> Check:
        if not (
            self.calls or self.terminal or self.no_tool_calls or self.reply or self.asks_user or self.state_as_reference
        ):
            raise ValueError(
                "a check needs at least one of calls, terminal, no_tool_calls, reply, asks_user, state_as_reference"
            )
        return self


class Reference(StrictModel):
    calls: list[CallCheck] = Field(default_factory=list)
    reply: str = ""
    asks_user: bool = False


class Turn(StrictModel):
    """v2: a user turn with its own check, and the reference calls that answer it (a turn may answer
    the model's question from an earlier turn)."""

    user: str
    check: Check | None = None
    reference: list[CallCheck] = Field(default_factory=list)
    # names of scenario tools first offered in this turn (not before it; BFCL's miss_func)
    tools_added: list[str] = Field(default_factory=list)


class StatefulClass(StrictModel):
    """v2: a Python mock class `module:Class` whose public methods are tools; built once per run. If it
    has `_load_scenario`, `_load_scenario(config, **options)` is called first, an empty config too (the
    convention of BFCL's backends, whose defaults are set there)."""

    cls: str = Field(alias="class", pattern=r"^[\w.]+:\w+$")
    config: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)  # keyword arguments of `_load_scenario`
    # set only by validation against an allowlist: a spec built any other way is never imported
    _allowed: bool = PrivateAttr(default=False)

    @field_validator("cls")
    @classmethod
    def _allowed_class(cls, value: str, info: ValidationInfo) -> str:
        allowlist = (info.context or {}).get("state_allowlist") or StateAllowlist()
        if not allowlist.allows(value):
            raise ValueError(allowlist.refusal(value))
        return value

    @model_validator(mode="after")
    def _mark_allowed(self) -> StatefulClass:
        self._allowed = True  # `cls` passed `_allowed_class`
        return self

    @property
    def allowed(self) -> bool:
        return self._allowed


class Provenance(StrictModel):
    """Where an imported scenario comes from, and under which license (kept with every file)."""

    dataset: str
    category: str = ""
    id: str
    license: str
    attribution: str
    approximations: list[str] = Field(default_factory=list)  # what the import could not say exactly


class Scenario(StrictModel):
    schema_version: Literal[1, 2] = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_\-]*$", max_length=80)
    family: str = Field(pattern=_FAMILY_NAME, max_length=40)
    description: str = ""
    system: str = ""
    turns: list[Turn] = Field(min_length=1)  # a plain string is a turn with only `user`
    state: list[StatefulClass] = Field(default_factory=list)  # v2: stateful mocks (Python code: allowlisted)
    tools: list[ToolDef] = Field(default_factory=list)
    terminal_tool: str | None = None
    max_iterations: int = Field(10, ge=1, le=100)
    # v2: the run ends once the first reply with tool calls is executed, all its calls together
    # (BFCL's single-turn cases judge one reply: parallel calls are the calls of that reply)
    end_after_calls: bool = False
    provenance: Provenance | None = None
    reference: Reference
    check: Check
    source: str = Field("", exclude=True)

    @field_validator("turns", mode="before")
    @classmethod
    def _plain_turns(cls, value: Any) -> Any:
        return [{"user": t} if isinstance(t, str) else t for t in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _names_are_known(self) -> Scenario:
        problem = self.reference_problem()
        if problem:
            raise ValueError(problem)
        return self

    def reference_problem(self) -> str | None:
        """The first tool name that does not exist, as '<field path>: <problem>'."""
        names = [t.name for t in self.tools]
        known = set(names)
        if len(known) != len(names):
            return f"tools: duplicate tool names {sorted(n for n in known if names.count(n) > 1)}"
        refs: list[tuple[str, str]] = []
        if self.terminal_tool:
            refs.append(("terminal_tool", self.terminal_tool))
        refs += [(f"reference.calls.{i}.name", c.name) for i, c in enumerate(self.reference.calls)]
        refs += [
            (f"turns.{t}.reference.{i}.name", c.name)
            for t, turn in enumerate(self.turns)
            for i, c in enumerate(turn.reference)
        ]
        refs += [
            (f"turns.{t}.tools_added.{i}", name)
            for t, turn in enumerate(self.turns)
            for i, name in enumerate(turn.tools_added)
        ]
        if self.check.calls:
            refs += [(f"check.calls.required.{i}.name", c.name) for i, c in enumerate(self.check.calls.required)]
            refs += [(f"check.calls.forbidden.{i}", n) for i, n in enumerate(self.check.calls.forbidden)]
            refs += [(f"check.calls.any_of.{i}", n) for i, n in enumerate(self.check.calls.any_of)]
        for where, name in refs:
            if name not in known:
                return f"{where}: unknown tool {name!r} (tools: {sorted(known)})"
        if self.check.terminal and not self.terminal_tool:
            return "check.terminal: needs a terminal_tool"
        return self._spec_problem()

    def _spec_problem(self) -> str | None:
        """The first invalid tool schema, argument spec or non-literal reference argument."""
        schemas = {t.name: t.parameters for t in self.tools}
        for i, tool in enumerate(self.tools):
            if problem := schema_problem(tool.parameters, f"tools.{i}.parameters"):
                return problem
            for j, mock in enumerate(tool.results):
                if problem := spec_vs_schema_problem(mock.when, tool.parameters, f"tools.{i}.results.{j}.when"):
                    return problem
        for i, ref in enumerate(self.reference.calls):
            where = f"reference.calls.{i}.arguments"
            if problem := literal_problem(ref.arguments, where) or spec_vs_schema_problem(
                ref.arguments, schemas[ref.name], where
            ):
                return problem
        for i, want in enumerate(self.check.calls.required if self.check.calls else []):
            where = f"check.calls.required.{i}.arguments"
            if problem := spec_vs_schema_problem(want.arguments, schemas[want.name], where):
                return problem
        return None

    @property
    def ideal_iterations(self) -> int:
        """Model calls a perfect run needs: one per reference call, plus one reply per turn."""
        ends_on_terminal = bool(
            self.terminal_tool and self.reference.calls and self.reference.calls[-1].name == self.terminal_tool
        )
        return len(self.skill().calls) + len(self.turns) - (1 if ends_on_terminal else 0)

    def user_text(self, index: int) -> str:
        return self.turns[index].user

    def tools_at(self, turn: int) -> list[ToolDef]:
        """The tools offered in turn `turn`: all but those a later turn adds."""
        later = {name for t in self.turns[turn + 1 :] for name in t.tools_added}
        return [t for t in self.tools if t.name not in later]

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)

    def skill(self) -> Skill:
        turn_calls = [c for t in self.turns for c in t.reference]
        calls = [
            ToolCall(id=f"ref_{i}", name=c.name, arguments=c.arguments)
            for i, c in enumerate(self.reference.calls + turn_calls)
        ]
        return Skill(
            calls=calls, reply=self.reference.reply, asks_user=self.reference.asks_user, parallel=self.end_after_calls
        )


def load_scenario(path: str | Path, allow_state_modules: Iterable[str] = ()) -> Scenario:
    """The scenario in `path`; its stateful mock classes must be BFCL's or in `allow_state_modules`."""
    doc = read_yaml(path)
    try:
        scenario = Scenario.model_validate(doc.data, context={"state_allowlist": StateAllowlist(allow_state_modules)})
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ScenarioError(str(path), problem.message, field=problem.field, line=doc.line_of(problem.loc)) from exc
    scenario.source = str(path)
    return scenario


def load_scenarios(paths: list[Path] | list[str], allow_state_modules: Iterable[str] = ()) -> list[Scenario]:
    """Load many files; scenario ids must be unique across them."""
    scenarios: list[Scenario] = []
    seen: dict[str, str] = {}
    for path in paths:
        scenario = load_scenario(path, allow_state_modules)
        if scenario.id in seen:
            raise ScenarioError(
                str(path), f"duplicate scenario id {scenario.id!r} (also in {seen[scenario.id]})", field="id"
            )
        seen[scenario.id] = str(path)
        scenarios.append(scenario)
    return scenarios
