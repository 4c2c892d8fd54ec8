"""The run config: which scenarios, on which backends and models, under which guard stacks, N times.

name: default
seed: 1234
runs: 25                       # runs per cell
scenarios: ["../scenarios/*/*.yaml"]   # globs, relative to this file
modes: [native]                # tool-calling modes: native and/or prompt
backends:
  - {label: sim-small, kind: sim, model: small-local}
strategies:                    # label -> stack of guards, applied in order
  trust_text: [trust_text]
  respond+nudge: [respond_tool, {retry_nudge: {max_retries: 3}}]
allow_state_modules: [mymocks] # optional: modules whose classes scenarios may build as stateful mocks
agents:                        # optional: agent loops under test, columns beside the guard stacks
  pydantic-ai: {agent: pydantic-ai, budget: 20}   # (evalkit/agents/entry.py; native mode only)
"""

from __future__ import annotations

import glob
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from evalkit._model import StrictModel, first_problem
from evalkit._yaml import read_yaml
from evalkit.agents.entry import AgentEntry
from evalkit.backends.entry import BackendEntry
from evalkit.chat import Sampling, ToolMode
from evalkit.errors import ConfigError, ResultsError, ScenarioError
from evalkit.strategies import StrategySpec

__all__ = ["CellRef", "RunConfig", "SideBySide", "load_config", "parse_strategy_specs", "recorded_stacks"]


class CellRef(StrictModel):
    """A column of the matrix: a backend entry's label, a guard stack's label and a tool mode."""

    backend: str
    strategy: str
    mode: ToolMode = "native"


class SideBySide(StrictModel):
    """Two columns that claim the same behaviour, compared per family in the report (e.g. a Forge
    proxy stack and evalkit's copy of it). It decides no run: editing it never blocks a resume."""

    claim: str
    left: CellRef
    right: CellRef


class RunConfig(StrictModel):
    name: str
    description: str = ""
    seed: int = 0
    runs: int = Field(25, ge=1, le=100_000)
    scenarios: list[str] = Field(min_length=1)
    families: list[str] | None = None
    custom_families: list[str] = Field(default_factory=list)  # families of your own, beyond the built-in ones
    modes: list[ToolMode] = Field(default_factory=lambda: list[ToolMode](["native"]), min_length=1)
    backends: list[BackendEntry] = Field(min_length=1)
    strategies: dict[str, list[Any]] = Field(default_factory=dict)
    agents: dict[str, AgentEntry] = Field(default_factory=dict)
    sampling: Sampling = Field(default_factory=Sampling)
    output: str | None = None
    # modules whose classes scenarios may use as stateful mocks (their code runs: see scenario/state_allowlist.py)
    allow_state_modules: list[str] = Field(default_factory=list)
    side_by_side: list[SideBySide] = Field(default_factory=list)
    # more of a backend's runs than this share as infra errors: the run ends with exit 3 and an
    # `infra_errors` footer (its backend was down); decides no run, so it leaves the hash alone
    max_infra_error_rate: float = Field(0.1, ge=0, le=1)
    base_dir: str = Field("", exclude=True)
    source: str = Field("", exclude=True)  # the file it was loaded from, for error messages

    @field_validator("backends")
    @classmethod
    def _unique_labels(cls, backends: list[BackendEntry]) -> list[BackendEntry]:
        labels = [b.label for b in backends]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(f"duplicate backend label(s): {dupes}")
        return backends

    @model_validator(mode="after")
    def _check_strategies(self) -> RunConfig:
        if not self.strategies and not self.agents:
            raise ValueError("strategies: give at least one guard stack (or an agent under `agents`)")
        both = sorted(set(self.strategies) & set(self.agents))
        if both:
            raise ValueError(f"agents.{both[0]}: the label is also a guard stack of `strategies`")
        # an agent sends its own requests with native tools: it has no prompt mode to run in
        if self.agents and "native" not in self.modes:
            raise ValueError(f"agents.{next(iter(self.agents))}: agents run in native mode: add native to `modes`")
        for label, specs in self.strategies.items():
            parse_strategy_specs(label, specs)
        for i, entry in enumerate(self.backends):
            unknown = [s for s in entry.strategies or [] if s not in self.strategies and s not in self.agents]
            if unknown:
                raise ValueError(f"backends.{i}.strategies: {unknown[0]!r} is not a stack of `strategies` or an agent")
            unused = [m for m in entry.modes or [] if m not in self.modes]
            if unused:
                raise ValueError(f"backends.{i}.modes: {unused[0]!r} is not in the config's `modes`")
        for i, pair in enumerate(self.side_by_side):
            for side in ("left", "right"):
                problem = self._not_a_column(getattr(pair, side))
                if problem:
                    raise ValueError(f"side_by_side.{i}.{side}: {problem}")
        return self

    def _not_a_column(self, ref: CellRef) -> str | None:
        entry = next((b for b in self.backends if b.label == ref.backend), None)
        if entry is None:
            return f"no backend entry {ref.backend!r}"
        modes, stacks = self.cells_of(entry)
        if (
            ref.strategy not in stacks
            or ref.mode not in modes
            or (ref.strategy in self.agents and ref.mode != "native")
        ):
            return f"{ref.backend} does not run {ref.strategy!r} in {ref.mode} mode"
        return None

    def cells_of(self, entry: BackendEntry) -> tuple[list[ToolMode], list[str]]:
        """The tool modes and column labels (guard stacks, then agents) that run on `entry`: the config's,
        in its order, narrowed by the entry's own `modes` and `strategies`. An agent runs in native mode
        only (`runs_in`)."""
        modes = [m for m in self.modes if entry.modes is None or m in entry.modes]
        stacks = [s for s in [*self.strategies, *self.agents] if entry.strategies is None or s in entry.strategies]
        return modes, stacks

    def runs_in(self, label: str, mode: ToolMode) -> bool:
        """Whether column `label` has cells in `mode` (an agent: native only)."""
        return mode == "native" or label not in self.agents

    def cell_count(self, scenarios: int, labels: set[str] | None = None) -> int:
        """Scenario cells in the matrix (optionally only the backend entries in `labels`)."""
        total = 0
        for entry in self.backends:
            if labels is None or entry.label in labels:
                modes, stacks = self.cells_of(entry)
                total += sum(self.runs_in(s, m) for m in modes for s in stacks) * scenarios
        return total

    def allowing_state_modules(self, modules: list[str]) -> RunConfig:
        """This config with `modules` (`--allow-state-module`) added to its own allowlist."""
        return self.model_copy(update={"allow_state_modules": [*self.allow_state_modules, *modules]})

    def strategy_specs(self) -> dict[str, list[StrategySpec]]:
        return {label: parse_strategy_specs(label, specs) for label, specs in self.strategies.items()}

    def scenario_paths(self) -> list[Path]:
        """Scenario files matched by the globs, relative to the config file, sorted and unique."""
        base = Path(self.base_dir or ".")
        found: set[Path] = set()
        for pattern in self.scenarios:
            full = pattern if Path(pattern).is_absolute() else str(base / pattern)
            matches = [Path(p) for p in glob.glob(full, recursive=True)]
            if not matches:
                raise ConfigError(f"{self.source or self.name}: scenarios: pattern {pattern!r} matches no file")
            # resolved, so two globs that reach one file through different paths load it once
            found.update(p.resolve() for p in matches)
        # sorted: the plan's order, and so the run ids' order, does not depend on the file system's
        return sorted(found)

    def as_replay(self, record_dir: Path) -> RunConfig:
        """This matrix with every backend served back from `record_dir/<label>` (what `--record` wrote)."""
        entries = [
            e.model_copy(
                update={
                    "kind": "replay",
                    "url": None,
                    "urls": None,
                    "endpoints": None,
                    "serve": None,
                    "api_key_env": None,
                    "options": {"dir": str(record_dir / e.label)},
                }
            )
            for e in self.backends
        ]
        # a file of its own: a replay must never append to the results it replays
        output = Path(self.output).with_suffix("") if self.output else Path("results") / self.name
        return self.model_copy(update={"backends": entries, "output": f"{output}-replay.jsonl"})

    def with_runs(self, runs: int) -> RunConfig:
        """This config with N runs per cell (`-n`), checked like the config's own `runs`."""
        data = self.model_dump(exclude_unset=True)  # a serve chain refuses llama-server fields given beside it
        data["runs"] = runs
        try:
            checked = RunConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"-n {runs}: {first_problem(exc).message}") from exc
        return self.model_copy(update={"runs": checked.runs})

    def fingerprint(self) -> str:
        """A hash of everything that decides the runs, to tell configs apart (a resume compares the
        stored config field by field: evalkit/run/config_diff.py)."""
        # these change what is written or shown, not what a run does: editing them keeps the hash
        dumped = self.model_dump(
            exclude={"output", "description", "allow_state_modules", "side_by_side", "max_infra_error_rate"}
        )
        _drop_added_defaults(dumped, _ADDED_LATER["top"])
        for backend in dumped["backends"]:  # fields added later count only when set: old hashes hold
            _drop_added_defaults(backend, _ADDED_LATER["backend"])
            if backend["serve"] is not None:
                _drop_added_defaults(backend["serve"], _ADDED_LATER["serve"])
        # sorted keys: the same config written in another key order has the same hash
        data = json.dumps(dumped, sort_keys=True)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


# Fields added after the first results files were written, with their defaults: at the default they
# leave the hash as it was, so a committed file's hash still matches its unchanged config.
_ADDED_LATER: dict[str, dict[str, Any]] = {
    "top": {"custom_families": [], "agents": {}},
    "backend": {"urls": None, "endpoints": None, "strategies": None, "modes": None},
    "serve": {"replicas": 1, "phases": None},
}


def _drop_added_defaults(dumped: dict[str, Any], added: dict[str, Any]) -> None:
    for name, default in added.items():
        if name in dumped and dumped[name] == default:
            del dumped[name]


def parse_strategy_specs(label: str, specs: list[Any]) -> list[StrategySpec]:
    """Turn a YAML guard list into (name, options) pairs, with errors that name the stack."""
    out: list[StrategySpec] = []
    # the three spellings a YAML stack allows: `name`, `{name: {options}}`, `{plugin: name, options: {...}}`
    for item in specs:
        if isinstance(item, str):
            out.append((item, {}))
        elif isinstance(item, dict) and set(item) <= {"plugin", "options"} and "plugin" in item:
            options = item.get("options") or {}
            if not isinstance(options, dict):
                raise ValueError(f"strategy stack {label!r}: options of plugin {item['plugin']!r} must be a mapping")
            out.append((str(item["plugin"]), dict(options)))
        elif isinstance(item, dict) and len(item) == 1:
            ((name, options),) = item.items()
            if not isinstance(options, dict):
                raise ValueError(f"strategy stack {label!r}: options of {name!r} must be a mapping")
            out.append((str(name), options))
        else:
            raise ValueError(f"strategy stack {label!r}: cannot read guard {item!r}")
    if not out:
        raise ValueError(f"strategy stack {label!r} is empty (use [trust_text] for no guard)")
    return out


def recorded_stacks(config: Mapping[str, Any], where: str) -> dict[str, list[StrategySpec]]:
    """The guard stacks a results header's config recorded (a results file is data: a stack it cannot
    hold is a `ResultsError` naming `where`, the file and line)."""
    strategies = config.get("strategies") or {}
    try:
        return {label: parse_strategy_specs(label, specs) for label, specs in strategies.items()}
    except ValueError as exc:
        raise ResultsError(f"{where}: config.strategies: {exc}") from None


def load_config(path: str | Path) -> RunConfig:
    """Load and validate a config file; errors name the file, the field and the line."""
    try:
        doc = read_yaml(path)
    except ScenarioError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        config = RunConfig.model_validate(doc.data)
    except ValidationError as exc:
        raise ConfigError(doc.invalid(exc)) from exc
    # the scenario globs are relative to the config file, wherever the command was run from
    config.base_dir = str(Path(path).resolve().parent)
    config.source = str(path)
    return config
