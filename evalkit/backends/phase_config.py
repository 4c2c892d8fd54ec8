"""A `serve:` chain of programs in a backend entry: what each phase runs, in what, and when it is ready.

    backends:
      - label: forge-proxy
        kind: openai
        model: small-local
        concurrency: 2                     # chains: runs in flight, each on its own proxy
        serve:
          phases:
            - name: model                  # the model server first: evalkit's simulated model
              command: ["{python}", -m, evalkit, serve, sim, --model, small-local, --port, "{port}",
                        --config, "{config}"]
            - name: forge                  # then a guard proxy in front of it
              venv: ../.forge/0.10.0
              command: [-m, forge.proxy, --backend-url, "{upstream}", --backend, openai, --port, "{port}"]
              ready: /forge/health

The first phase is the model server: a command, or evalkit's own llama-server (`llama_server:`, the
settings of the plain `serve:` form). Every later phase is a command whose `{upstream}` is the phase
before it, and the entry's backend talks to the last one. Between the model server and the next phase
evalkit puts a counting pass-through (evalkit/backends/passthrough.py), so each run records what the
model server served. Placeholders (`PLACEHOLDERS`) are filled in per phase; `{{` is a literal brace.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from evalkit._model import StrictModel

__all__ = [
    "PLACEHOLDERS",
    "LlamaServerPhase",
    "LlamaServerSettings",
    "PhaseSettings",
    "expand_env",
    "placeholders_in",
    "variables_in",
]

PLACEHOLDERS = {
    "port": "the port evalkit gives this phase (a free one, or the phase's `port`)",
    "host": "the address it listens on: 127.0.0.1",
    "url": "its own root URL, http://127.0.0.1:{port}",
    "upstream": "the root URL of the phase before it (through the counting pass-through); not in the first",
    "python": "the Python interpreter running evalkit",
    "config": "the run config file",
    "config_dir": "the folder of the run config file",
}


_ENV_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_env(text: str, field: str, environ: Mapping[str, str] | None = None) -> str:
    """`${NAME}` and `${NAME:-default}` in a phase's `venv` or `python` filled in from the environment,
    so one config runs against several installs (`venv: ../.forge/${FORGE_VERSION:-0.10.0}`) and the
    config, its hash and its backend labels stay the same: the header records what really ran (the
    phase's interpreter and its packages' versions). ValueError names the field and the variable, also
    for a value with a `..` in it (FORGE_VERSION='../../tmp/x' would leave `.forge/`)."""
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if env.get(name):
            # a value names a folder inside the one the config names (`.forge/<release>`), never its parent
            if ".." in re.split(r"[/\\]", env[name]):
                raise ValueError(f"{field}: environment variable {name}={env[name]!r} names a folder outside {text!r}")
            return env[name]
        if default is not None:
            return default
        raise ValueError(f"{field}: environment variable {name} is not set (or give a default: ${{{name}:-VALUE}})")

    return _ENV_VARIABLE.sub(value, text)


def variables_in(text: str) -> list[str]:
    """The names of the environment variables `expand_env` reads in `text`."""
    return [match.group(1) for match in _ENV_VARIABLE.finditer(text)]


def placeholders_in(text: str) -> set[str]:
    """The `{name}` fields of a template (ValueError for an unbalanced brace)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


class LlamaServerSettings(StrictModel):
    """evalkit's own llama-server: the plain `serve:` form, or the first phase of a chain.

    `model` is a packaged model (smollm2, gemma3-270m) or a .gguf path; by default the entry's model.
    `template`: `project` (our ChatML tool-calling template), `model` (the GGUF's own), or a file path.
    """

    model: str | None = None
    template: str = "project"
    parallel: int = Field(2, ge=1, le=64)
    ctx_size: int = Field(8192, ge=256)
    threads: int | None = Field(None, ge=1)
    seed: int = 0
    startup_timeout_s: float = Field(180.0, gt=0)


class LlamaServerPhase(LlamaServerSettings):
    """llama-server as a chain's model server; `metrics` serves its Prometheus `/metrics` too."""

    metrics: bool = False


_COMMAND_ONLY = ("python", "venv", "env", "port", "packages", "ready", "timeout_s")


class PhaseSettings(StrictModel):
    """One program of a chain: `command` (with `python` or a `venv` to run it in), or `llama_server`.

    `ready`: a path on the phase's URL (or a whole URL) answered with HTTP 200 once it serves; it is
    polled for up to `timeout_s`. `venv` and `python` may name environment variables (`expand_env`).
    `env` is added to evalkit's environment. `packages`: distributions
    whose version and installed files' hash the results header records, besides the one that provides
    the module a `-m` command runs.
    """

    name: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    llama_server: LlamaServerPhase | None = None
    command: list[str] | None = Field(None, min_length=1)
    python: str | None = None
    venv: str | None = None
    ready: str = "/health"
    timeout_s: float = Field(120.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    port: int | None = Field(None, ge=1, le=65535)
    packages: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_program(self) -> PhaseSettings:
        if (self.command is None) == (self.llama_server is None):
            raise ValueError("a phase runs either `command` or `llama_server`, not both and not neither")
        if self.llama_server is not None:
            given = [name for name in _COMMAND_ONLY if name in self.model_fields_set]
            if given:
                raise ValueError(f"{given[0]}: only a `command` phase takes it (llama_server has its own settings)")
        if self.python is not None and self.venv is not None:
            raise ValueError("give `python` or `venv`, not both (a venv runs its own bin/python)")
        return self

    @field_validator("venv", "python")
    @classmethod
    def _balanced_variables(cls, value: str | None) -> str | None:
        if value is not None and "$" in _ENV_VARIABLE.sub("", value):
            raise ValueError(f"{value!r}: write an environment variable as ${{NAME}} or ${{NAME:-default}}")
        return value

    @field_validator("command", "ready")
    @classmethod
    def _known_placeholders(cls, value: Any) -> Any:
        for text in value if isinstance(value, list) else [value] if value is not None else []:
            _check_placeholders(text)
        return value

    @field_validator("env")
    @classmethod
    def _known_env_placeholders(cls, env: dict[str, str]) -> dict[str, str]:
        for text in env.values():
            _check_placeholders(text)
        return env

    def label(self, position: int) -> str:
        """How errors and the header name it: its `name`, else its program's."""
        if self.name:
            return self.name
        if self.llama_server is not None:
            return "llama-server"
        assert self.command is not None
        if self.command[0] == "-m" and len(self.command) > 1:
            return self.command[1].split(".")[0]
        program = self.command[0].rsplit("/", 1)[-1]
        return program if "{" not in program else f"phase{position}"

    def uses(self, placeholder: str) -> bool:
        texts = [*(self.command or []), self.ready, *self.env.values()]
        return any(placeholder in placeholders_in(t) for t in texts)


def _check_placeholders(text: str) -> None:
    try:
        names = placeholders_in(text)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc} (write {{{{ for a literal brace)") from exc
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown:
        raise ValueError(f"{text!r}: unknown placeholder {{{unknown[0]}}} (known: {', '.join(PLACEHOLDERS)})")
