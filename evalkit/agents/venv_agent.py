"""A Python agent in a venv of its own: a driver script (evalkit/agents/drivers/) run by that venv's
Python. scripts/install-agents.sh makes `.agents/<name>/` from PyPI with pinned versions and writes
`.agents/<name>/evalkit-agent.json` (name, package, version, install hash: the sha256 of the venv's
`pip freeze`), which the results header records.

Where the venv is: the entry's `venv` option (relative to the config file), else
`$EVALKIT_AGENTS_DIR/<name>`, else `.agents/<name>` in the current folder. The option may name an
environment variable, as a server phase's `venv` does (`../.agents/pydantic-ai-${PYDANTIC_AI_VERSION:-2.68.0}`):
one config then runs any installed release, its labels and hash unchanged, and the results header
records the release that ran (the upgrade gate, docs/agents-under-test.md, "A gate across two agent releases").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from evalkit.agents.base import AgentEnd, AgentRun
from evalkit.agents.command import json_end, json_final, run_variables
from evalkit.backends.phase_config import expand_env
from evalkit.errors import ConfigError

__all__ = ["INSTALL_RECORD", "VenvAgent"]

INSTALL_RECORD = "evalkit-agent.json"
DRIVERS = Path(__file__).resolve().parent / "drivers"


class VenvAgent:
    """What the Python agents share; a subclass names its driver and maps its options to variables."""

    name = ""
    driver = ""
    knobs: ClassVar[Mapping[str, str]] = {}  # option name -> environment variable the driver reads

    def __init__(self, options: Mapping[str, Any], base_dir: Path):
        unknown = sorted(set(options) - {"venv", *self.knobs})
        if unknown:
            known = ", ".join(["venv", *self.knobs])
            raise ConfigError(f"options.{unknown[0]}: {self.name} takes no such option (it takes {known})")
        self.options = dict(options)
        if "venv" in options:
            try:
                self.venv = base_dir / expand_env(str(options["venv"]), "options.venv")
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
        else:
            root = os.environ.get("EVALKIT_AGENTS_DIR")
            self.venv = (Path(root) if root else Path(".agents")) / self.name

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def install_hint(self) -> str:
        return f"bash scripts/install-agents.sh {self.name}"

    def check(self) -> None:
        if not (self.venv / INSTALL_RECORD).is_file() or not self.python.exists():
            raise ConfigError(f"{self.name} is not installed in {self.venv}: {self.install_hint()}")
        if not os.access(self.python, os.X_OK):
            raise ConfigError(f"{self.python} is not an executable file: {self.install_hint()}")

    def command(self, run: AgentRun) -> list[str]:
        return [str(self.python), str(DRIVERS / self.driver)]

    def environment(self, run: AgentRun) -> dict[str, str]:
        env = run_variables(run)
        env.update({var: str(self.options[o]) for o, var in self.knobs.items() if o in self.options})
        return env

    def final_reply(self, stdout: str) -> str | None:
        return json_final(stdout)

    def ended(self, stdout: str) -> AgentEnd | None:
        return json_end(stdout)

    def describe(self) -> dict[str, str]:
        try:
            record = json.loads((self.venv / INSTALL_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"name": self.name, "version": "unknown", "install_hash": "unknown"}
        return {k: str(record.get(k, "unknown")) for k in ("name", "package", "version", "install_hash")}
