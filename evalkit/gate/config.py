"""The regression gate's settings: what `evalkit gate --config gate.yaml` and its options set."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from evalkit._model import StrictModel
from evalkit._yaml import read_yaml
from evalkit.errors import GateInputError
from evalkit.results.records import Cell
from evalkit.stats.registry import UNPAIRED, Statistics

__all__ = [
    "FloorRule",
    "GateConfig",
    "Level",
    "Metric",
    "Pairing",
    "SequentialSettings",
    "load_gate_config",
]

Metric = Literal["correct", "completed"]
Level = Literal["scenario", "family", "cell"]
Pairing = Literal["auto", "paired", "unpaired"]


class FloorRule(StrictModel):
    """A floor for the cells whose fields match these globs (the first matching rule wins)."""

    floor: float = Field(ge=0, le=1)
    backend: str = "*"
    model: str = "*"
    mode: str = "*"
    strategy: str = "*"
    family: str = "*"
    scenario: str = "*"


class SequentialSettings(StrictModel):
    """`gate --sequential`: the candidate runs in batches against a baseline results file, each cell
    until its fixed-N verdict at `max_runs` is known (see `evalkit.stats.stopping_rule`). `futility`: a
    cell stops as accepted once its chance of still failing at `max_runs`, at the drop that the
    fixed-N test catches with 80% probability, is under this (it costs at most this much power)."""

    futility: float = Field(0.1, ge=0, lt=1)
    batch: int = Field(5, ge=1, le=100_000)
    max_runs: int = Field(50, ge=1, le=100_000)


class GateConfig(StrictModel):
    alpha: float = Field(0.05, gt=0, lt=1)
    metric: Metric = "correct"
    floor: float | None = Field(None, ge=0, le=1)
    floors: list[FloorRule] = Field(default_factory=list)
    max_infra_error_rate: float = Field(0.1, ge=0, le=1)
    test: str = UNPAIRED.default  # a statistic of `evalkit.stats.registry.UNPAIRED` (or the context's)
    pairing: Pairing = "auto"
    level: Level = "scenario"
    match_model: bool = False
    sequential: SequentialSettings = Field(default_factory=SequentialSettings)
    # a cell not judged (missing, partial, infra errors above the limit in it) exits 4 unless allowed
    allow_unjudged: bool = False
    # a cell regresses only on evidence of a drop larger than this (0: any significant drop)
    margin: float = Field(0.0, ge=0, lt=1)
    # a Cochran–Mantel–Haenszel test over all cells (and per family), in the cells' Holm family
    stratified: bool = False
    # a passed cell not shown within the margin exits 4 (instead of passing with "not enough evidence")
    require_evidence: bool = False

    @field_validator("test")
    @classmethod
    def _registered(cls, name: str, info: ValidationInfo) -> str:
        """A registered statistic; validation's context may give other `statistics` (a test's)."""
        statistics: Statistics = (info.context or {}).get("statistics", UNPAIRED)
        if name not in statistics.names:  # worded as pydantic words a Literal's error
            raise PydanticCustomError(
                "literal_error", "Input should be {expected}", {"expected": statistics.expected()}
            )
        return name

    def floor_for(self, c: Cell) -> float | None:
        # the first matching rule wins, so a specific rule goes before a general one in the file
        for rule in self.floors:
            fields = (
                (rule.backend, c.backend),
                (rule.model, c.model),
                (rule.mode, c.mode),
                (rule.strategy, c.strategy),
                (rule.family, c.family),
                (rule.scenario, c.scenario),
            )
            # case-sensitive on every platform: a label means the same on macOS and Linux
            if all(fnmatchcase(value, pattern) for pattern, value in fields):
                return rule.floor
        # no rule matched: the one floor for every cell, if set
        return self.floor


def load_gate_config(path: str | Path, statistics: Statistics = UNPAIRED) -> GateConfig:
    doc = read_yaml(path)  # a ScenarioError here names the file and line, and exits 2 like ours
    try:
        return GateConfig.model_validate(doc.data or {}, context={"statistics": statistics})
    except ValidationError as exc:
        raise GateInputError(doc.invalid(exc)) from exc
