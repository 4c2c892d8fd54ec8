"""The one strict pydantic base model, and the one way a validation error becomes a message.

Every file evalkit reads (scenario, config, gate config, simulated profile, results) is parsed into
models that refuse unknown fields, so a typo is an error naming the field rather than a setting
silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["Problem", "StrictModel", "first_problem"]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Problem:
    """The first thing wrong in a document: where (`loc`, and as text `field`) and what."""

    loc: tuple[str | int, ...]
    message: str

    @property
    def field(self) -> str:
        return ".".join(str(p) for p in self.loc) or "(top level)"


def first_problem(exc: ValidationError) -> Problem:
    """The first error of `exc`, without pydantic's "Value error, " prefix. A cross-field check that
    names its own path (`"check.calls.0: ..."`, raised at the top level) is placed at that path."""
    first = exc.errors()[0]
    loc: tuple[str | int, ...] = tuple(first["loc"])
    message = str(first["msg"]).removeprefix("Value error, ")
    if not loc and ": " in message:
        where, rest = message.split(": ", 1)
        if where and " " not in where:
            loc = tuple(int(p) if p.isdigit() else p for p in where.split("."))
            message = rest
    return Problem(loc, message)
