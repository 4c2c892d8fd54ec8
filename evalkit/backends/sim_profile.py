"""Behaviour profiles for the simulated backend (YAML files in `evalkit/profiles/`).

Probabilities are per model call and depend on the situation the simulated model is in: the next
right move is a tool call (`tool_step`) or a reply to the user (`reply_step`), and whether a guard
has just nudged it. The numbers in the shipped profiles are illustrative, chosen to show the
trade-offs the seed documents describe; they are not measurements of any real model. That holds
for `tool_step.call_as_text` too: the shipped profiles give it a weight (1% to 7% of the plain tool
steps) so rescue parsing has something to recover on the simulated model, where the fitted SmolLM2
profile's is ~0 (it never wrote the intended call as text at a native tool step: 0 of 481).

A *fitted* profile (`evalkit sim fit`) is measured instead: it carries `fitted` (the model, the
source files' hashes, the prior, and every parameter's interval and number of calls) and may carry
`overrides`, parameters that replace the base ones for one scenario family or tool mode where the
recorded calls show the base situations are too coarse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from evalkit._model import StrictModel, first_problem
from evalkit._yaml import read_yaml
from evalkit.errors import ConfigError, ScenarioError
from evalkit.profiles import PROFILE_DIR, profile_names

__all__ = [
    "AfterNudge",
    "Constrained",
    "Fitted",
    "Override",
    "ReplyStep",
    "SimProfile",
    "ToolStep",
    "load_profile",
]


class ToolStep(StrictModel):
    """When the next right move is a tool call. Weights are normalised, so they need not sum to 1."""

    correct: float = Field(ge=0)
    text_instead_of_tool: float = Field(ge=0)
    malformed_call: float = Field(ge=0)
    hallucinated_tool: float = Field(ge=0)
    wrong_arguments: float = Field(ge=0)
    premature_answer: float = Field(ge=0)
    # the right call, written as text in the reply (a fenced JSON object, as SmolLM2 writes it) rather
    # than as a structured call: what `rescue_parse` and Forge's rescue recover. Last, and 0 by default,
    # so a profile without it draws exactly what it drew before the weight existed.
    call_as_text: float = Field(0.0, ge=0)


class ReplyStep(StrictModel):
    """When the next right move is a reply (a greeting, an off-topic question, a final answer)."""

    unneeded_tool_call: float = Field(ge=0, le=1)
    uses_respond: float = Field(ge=0, le=1)  # calls `respond` rather than writing bare text, when offered
    wrong_reply: float = Field(0.0, ge=0, le=1)  # the answer (text or `respond`) fails the check's reply items


class AfterNudge(StrictModel):
    """Just after a guard's corrective message."""

    tool_step_correct: float = Field(ge=0, le=1)  # self-corrects to the right call
    reply_step_tool_call: float = Field(ge=0, le=1)  # a nudge after "hi" pushes it into calling some tool
    uses_respond: float = Field(ge=0, le=1)  # with `respond` offered, a nudge sends it there
    wrong_reply: float = Field(0.0, ge=0, le=1)  # the answer after a nudge fails the check's reply items


class Override(StrictModel):
    """Parameters for the calls of one family and/or mode; a part left out keeps the base one."""

    family: str | None = None
    mode: Literal["native", "prompt"] | None = None
    tool_step: ToolStep | None = None
    reply_step: ReplyStep | None = None
    after_nudge: AfterNudge | None = None

    def applies(self, mode: str, family: str) -> bool:
        return (self.family is None or self.family == family) and (self.mode is None or self.mode == mode)


class Estimate(StrictModel):
    """One fitted parameter: its value (the posterior mean), a 95% interval, the calls behind it and
    how many of them showed the behaviour (so a posterior draw needs nothing but the profile)."""

    value: float = Field(ge=0, le=1)
    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    calls: int = Field(ge=0)
    count: int = Field(ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> Estimate:
        # a posterior draw is Beta(count + 1/2, calls - count + 1/2): more showings than calls has none
        if self.count > self.calls:
            raise ValueError(f"count {self.count} is more than its calls {self.calls}")
        if not self.low <= self.value <= self.high:
            raise ValueError(f"value {self.value} is not within its interval [{self.low}, {self.high}]")
        return self


class Source(StrictModel):
    file: str  # the file's name, never a machine path
    sha256: str


class Fitted(StrictModel):
    """Where a fitted profile's numbers come from."""

    model: str
    model_sha256: str | None = None  # the GGUF's, when the results header recorded it
    sources: list[Source]
    prior: str
    runs: int = Field(ge=0)
    calls: int = Field(ge=0)
    estimates: dict[str, Estimate] = Field(default_factory=dict)  # "tool_step.correct", "family=x.tool_step..."
    notes: list[str] = Field(default_factory=list)


class Behaviour(StrictModel):
    """The parameters in force for one call."""

    tool_step: ToolStep
    reply_step: ReplyStep
    after_nudge: AfterNudge


class Constrained(StrictModel):
    """Under a grammar or schema constraint. Without this part a constrained call is derived from the
    tool-step weights (format errors impossible, prose turned into the right call, `respond` at a
    reply step); a fitted profile measures it instead."""

    tool_step_correct: float = Field(ge=0, le=1)  # the intended call
    tool_step_respond: float = Field(ge=0, le=1)  # an answer through `respond` (the rest: another call)
    reply_step_respond: float = Field(ge=0, le=1)  # the answer through `respond` (the rest: some tool call)


class SimProfile(StrictModel):
    name: str
    description: str = ""
    tool_step: ToolStep
    reply_step: ReplyStep
    after_nudge: AfterNudge
    constrained: Constrained | None = None
    overrides: list[Override] = Field(default_factory=list)
    fitted: Fitted | None = None
    respond_instead_of_tool: float = Field(0.0, ge=0, le=1)  # with `respond` offered, answers too early
    prompt_mode_malformed: float = Field(0.0, ge=0, le=1)  # extra format errors writing calls as text

    @model_validator(mode="after")
    def _some_weight(self) -> SimProfile:
        if sum(self.tool_step.model_dump().values()) <= 0:
            raise ValueError("tool_step weights are all zero")
        if self.fitted is not None:
            for name in self.fitted.estimates:
                if not _known_estimate(name, self.overrides):
                    raise ValueError(f"fitted.estimates: {name[:80]!r} names no parameter of this profile")
        return self

    def behaviour(self, mode: str, family: str) -> Behaviour:
        """The base parameters, with every override that applies laid over them (later ones win)."""
        parts = {"tool_step": self.tool_step, "reply_step": self.reply_step, "after_nudge": self.after_nudge}
        for override in self.overrides:
            if override.applies(mode, family):
                parts |= {k: v for k in parts if (v := getattr(override, k)) is not None}
        return Behaviour.model_validate(parts)

    def label(self) -> str:
        """How results from this profile are labelled wherever simulated results are shown."""
        if self.fitted is None:
            return "SIMULATED"
        files = ", ".join(s.file for s in self.fitted.sources)
        return f"SIMULATED (fitted to {self.fitted.model} from {files})"


_PARTS: dict[str, type[StrictModel]] = {
    "tool_step": ToolStep,
    "reply_step": ReplyStep,
    "after_nudge": AfterNudge,
    "constrained": Constrained,
}


def _known_estimate(name: str, overrides: list[Override]) -> bool:
    """`part.parameter`, or `family=F.part.parameter` / `mode=M.part.parameter` of one of the overrides."""
    parts = name.split(".")
    if len(parts) == 3:
        key, _, value = parts[0].partition("=")
        if key not in ("family", "mode") or not any(getattr(o, key) == value for o in overrides):
            return False
        parts = parts[1:]
    model = _PARTS.get(parts[0]) if len(parts) == 2 else None
    return model is not None and parts[1] in model.model_fields


def load_profile(name_or_path: str) -> SimProfile:
    """A shipped profile by name (`small-local`) or a YAML file by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PROFILE_DIR / f"{name_or_path}.yaml"
        try:
            shipped = path.is_file()
        except (OSError, ValueError):  # a name too long for a file, or holding a NUL: no shipped profile has it
            shipped = False
        if not shipped:
            known = ", ".join(profile_names())
            raise ConfigError(
                f"unknown simulated profile {name_or_path[:60]!r} (shipped: {known}; or a path to a .yaml)"
            )
    try:
        doc = read_yaml(path)
        return SimProfile.model_validate(doc.data)
    except ScenarioError as exc:
        raise ConfigError(str(exc)) from exc
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ConfigError(f"{path}: {problem.field}: {problem.message}") from exc
