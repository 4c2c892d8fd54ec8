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
"""

from __future__ import annotations

import glob
import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalkit.chat import Sampling, ToolMode
from evalkit.errors import ConfigError, ScenarioError
from evalkit.strategies import StrategySpec
from evalkit.yamlfile import read_yaml

__all__ = [
    "BackendEntry",
    "EndpointSettings",
    "RetrySettings",
    "RunConfig",
    "ServeSettings",
    "load_config",
    "parse_strategy_specs",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _checked_url(url: str) -> str:
    check_http_url(url)
    return url


_HttpURL = Annotated[str, AfterValidator(_checked_url)]  # for `urls` and `endpoints`, checked like `url`


class RetrySettings(_Model):
    """Backoff for backend faults (timeouts, connection errors, 429, 5xx)."""

    attempts: int = Field(4, ge=1, le=20)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(8.0, ge=0)


class ServeSettings(_Model):
    """Let the runner start a local llama-server for this entry, and stop it when the entry is done.

    `model` is a packaged model (smollm2, gemma3-270m) or a .gguf path; by default the entry's model.
    `template`: `project` (our ChatML tool-calling template), `model` (the GGUF's own), or a file path.
    `replicas`: servers to start, each with `parallel` slots, used as one pool (`evalkit.backends.pool`).
    """

    model: str | None = None
    template: str = "project"
    parallel: int = Field(2, ge=1, le=64)
    ctx_size: int = Field(8192, ge=256)
    threads: int | None = Field(None, ge=1)
    seed: int = 0
    startup_timeout_s: float = Field(180.0, gt=0)
    replicas: int = Field(1, ge=1, le=16)  # servers to start, used as one pool of endpoints


class EndpointSettings(_Model):
    """One server of a backend entry with several (`endpoints:`); see `evalkit.backends.pool`.

    `concurrency`: calls in flight on this server; by default its `/props` slots (llama-server),
    else the entry's `concurrency`.
    """

    url: _HttpURL
    concurrency: int | None = Field(None, ge=1, le=256)


class BackendEntry(_Model):
    """One backend and model. `label` names it in results and reports.

    Several servers of the same model: `urls: [...]` or `endpoints: [{url, concurrency}]` instead of `url`.
    """

    label: str
    kind: str
    model: str
    url: str | None = None
    api_key_env: str | None = None  # the *name* of the variable; the key itself is never stored
    concurrency: int = Field(4, ge=1, le=256)
    timeout_s: float = Field(120.0, gt=0)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    options: dict[str, Any] = Field(default_factory=dict)
    serve: ServeSettings | None = None
    urls: list[_HttpURL] | None = Field(None, min_length=1)
    endpoints: list[EndpointSettings] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_way_to_name_servers(self) -> BackendEntry:
        given = [name for name in ("url", "urls", "endpoints", "serve") if getattr(self, name) is not None]
        if len(given) > 1:
            raise ValueError(f"give one of url, urls, endpoints, serve, not {' and '.join(given)}")
        return self

    def endpoint_list(self) -> list[EndpointSettings]:
        """The servers named by `urls` or `endpoints`; empty for an entry with one `url` (or none)."""
        if self.endpoints is not None:
            return list(self.endpoints)
        return [EndpointSettings(url=url) for url in self.urls or []]

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        from evalkit.backends import BACKENDS

        if kind not in BACKENDS:
            raise ValueError(f"unknown backend kind {kind!r} (known: {', '.join(BACKENDS)})")
        return kind

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None:
            check_http_url(url)
        return url

    @model_validator(mode="after")
    def _serve_needs_llama_server(self) -> BackendEntry:
        if self.serve is not None and self.kind != "llama-server":
            raise ValueError(f"serve: only a llama-server backend can be started by evalkit, not {self.kind!r}")
        if self.serve is not None and self.url is not None:
            raise ValueError("serve: give either url (a server you run) or serve (evalkit starts one), not both")
        return self


def check_http_url(url: str) -> None:
    """An absolute http(s) URL with a host; anything else is refused with what is wrong (credentials
    in it blanked). The backends check the same way (one rule, in `backends._http.url_problem`)."""
    from evalkit.backends._http import url_problem  # here: httpx stays out of start-up

    problem = url_problem(url)
    if problem:
        raise ValueError(f"url {problem}")


class RunConfig(_Model):
    name: str
    description: str = ""
    seed: int = 0
    runs: int = Field(25, ge=1, le=100_000)
    scenarios: list[str] = Field(min_length=1)
    families: list[str] | None = None
    custom_families: list[str] = Field(default_factory=list)  # families of your own, beyond the built-in ones
    modes: list[ToolMode] = Field(default_factory=lambda: list[ToolMode](["native"]), min_length=1)
    backends: list[BackendEntry] = Field(min_length=1)
    strategies: dict[str, list[Any]] = Field(min_length=1)
    sampling: Sampling = Field(default_factory=Sampling)
    output: str | None = None
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
        for label, specs in self.strategies.items():
            parse_strategy_specs(label, specs)
        return self

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
            found.update(p.resolve() for p in matches)
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
        output = Path(self.output).with_suffix("") if self.output else Path("results") / self.name
        return self.model_copy(update={"backends": entries, "output": f"{output}-replay.jsonl"})

    def with_runs(self, runs: int) -> RunConfig:
        """This config with N runs per cell (`-n`), checked like the config's own `runs`."""
        data = self.model_dump()
        data["runs"] = runs
        try:
            checked = RunConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"-n {runs}: {exc.errors()[0]['msg']}") from exc
        return self.model_copy(update={"runs": checked.runs})

    def fingerprint(self) -> str:
        """A hash of everything that decides the runs, to refuse resuming into another config."""
        dumped = self.model_dump(exclude={"output", "description"})
        for backend in dumped["backends"]:  # fields added later count only when set: old hashes hold
            for name in ("urls", "endpoints"):
                if backend[name] is None:
                    del backend[name]
            if backend["serve"] is not None and backend["serve"]["replicas"] == 1:
                del backend["serve"]["replicas"]
        data = json.dumps(dumped, sort_keys=True)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def parse_strategy_specs(label: str, specs: list[Any]) -> list[StrategySpec]:
    """Turn a YAML guard list into (name, options) pairs, with errors that name the stack."""
    out: list[StrategySpec] = []
    for item in specs:
        if isinstance(item, str):
            out.append((item, {}))
        elif isinstance(item, dict) and set(item) <= {"plugin", "options"} and "plugin" in item:
            out.append((str(item["plugin"]), dict(item.get("options") or {})))
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


def load_config(path: str | Path) -> RunConfig:
    """Load and validate a config file; errors name the file, the field and the line."""
    try:
        doc = read_yaml(path)
    except ScenarioError as exc:
        raise ConfigError(str(exc)) from exc
    try:
        config = RunConfig.model_validate(doc.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        field = ".".join(str(p) for p in loc) or "(top level)"
        line = doc.line_of(loc)
        where = f"{path}:{line}" if line else str(path)
        message = first["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
        raise ConfigError(f"{where}: {field}: {message}") from exc
    config.base_dir = str(Path(path).resolve().parent)
    config.source = str(path)
    return config
