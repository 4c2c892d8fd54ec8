"""Behaviour profiles for the simulated backend (YAML files in `evalkit/profiles/`).

Probabilities are per model call and depend on the situation the simulated model is in: the next
right move is a tool call (`tool_step`) or a reply to the user (`reply_step`), and whether a guard
has just nudged it. The numbers in the shipped profiles are illustrative, chosen to show the
trade-offs the seed documents describe; they are not measurements of any real model.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from evalkit._model import StrictModel, first_problem
from evalkit._yaml import read_yaml
from evalkit.errors import ConfigError, ScenarioError

__all__ = ["PROFILE_DIR", "SimProfile", "load_profile"]

PROFILE_DIR = Path(__file__).resolve().parent.parent / "profiles"


class ToolStep(StrictModel):
    """When the next right move is a tool call. Weights are normalised, so they need not sum to 1."""

    correct: float = Field(ge=0)
    text_instead_of_tool: float = Field(ge=0)
    malformed_call: float = Field(ge=0)
    hallucinated_tool: float = Field(ge=0)
    wrong_arguments: float = Field(ge=0)
    premature_answer: float = Field(ge=0)


class ReplyStep(StrictModel):
    """When the next right move is a reply (a greeting, an off-topic question, a final answer)."""

    unneeded_tool_call: float = Field(ge=0, le=1)
    uses_respond: float = Field(ge=0, le=1)  # calls `respond` rather than writing bare text, when offered


class AfterNudge(StrictModel):
    """Just after a guard's corrective message."""

    tool_step_correct: float = Field(ge=0, le=1)  # self-corrects to the right call
    reply_step_tool_call: float = Field(ge=0, le=1)  # a nudge after "hi" pushes it into calling some tool
    uses_respond: float = Field(ge=0, le=1)  # with `respond` offered, a nudge sends it there


class SimProfile(StrictModel):
    name: str
    description: str = ""
    tool_step: ToolStep
    reply_step: ReplyStep
    after_nudge: AfterNudge
    respond_instead_of_tool: float = Field(0.0, ge=0, le=1)  # with `respond` offered, answers too early
    prompt_mode_malformed: float = Field(0.0, ge=0, le=1)  # extra format errors writing calls as text

    @model_validator(mode="after")
    def _some_weight(self) -> SimProfile:
        if sum(self.tool_step.model_dump().values()) <= 0:
            raise ValueError("tool_step weights are all zero")
        return self


def load_profile(name_or_path: str) -> SimProfile:
    """A shipped profile by name (`small-local`) or a YAML file by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PROFILE_DIR / f"{name_or_path}.yaml"
        if not path.exists():
            known = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.yaml")))
            raise ConfigError(f"unknown simulated profile {name_or_path!r} (shipped: {known}; or a path to a .yaml)")
    try:
        doc = read_yaml(path)
        return SimProfile.model_validate(doc.data)
    except ScenarioError as exc:
        raise ConfigError(str(exc)) from exc
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ConfigError(f"{path}: {problem.field}: {problem.message}") from exc
