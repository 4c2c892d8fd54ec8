"""An agent given as a command line: any program, told about its run through `EVALKIT_*` variables.

    EVALKIT_MODEL_BASE_URL  the run's OpenAI-compatible base URL (…/run/<token>/v1)
    EVALKIT_MODEL, EVALKIT_API_KEY
    EVALKIT_MCP_URL         the run's streamable-HTTP MCP endpoint (the scenario's tools)
    EVALKIT_MCP_SERVER_NAME "evalkit"
    EVALKIT_PROMPT          the scenario's user turn (also the last argument)
    EVALKIT_SYSTEM          the scenario's system prompt
    OPENAI_BASE_URL, OPENAI_API_KEY  the same model URL and key, for programs built on OpenAI's SDK

Its final reply is a last stdout line `{"final": TEXT}` if it prints one, else its whole stdout
(stripped). A relative program path is the config file's folder's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.agents.base import AgentEnd, AgentRun
from evalkit.errors import ConfigError

__all__ = ["CommandAgent", "json_final", "run_variables"]


def run_variables(run: AgentRun) -> dict[str, str]:
    """The run's facts as environment variables (every agent gets them)."""
    return {
        "EVALKIT_MODEL_BASE_URL": run.model_base_url,
        "EVALKIT_MODEL": run.model,
        "EVALKIT_API_KEY": run.api_key,
        "EVALKIT_MCP_URL": run.mcp_url,
        "EVALKIT_MCP_SERVER_NAME": run.mcp_server_name,
        "EVALKIT_PROMPT": run.prompt,
        "EVALKIT_SYSTEM": run.system,
        "EVALKIT_TIME_LIMIT_S": str(run.time_limit_s),
        "OPENAI_BASE_URL": run.model_base_url,
        "OPENAI_API_KEY": run.api_key,
    }


def _last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        if line.strip():
            try:
                data = json.loads(line)
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def json_final(stdout: str) -> str | None:
    """The reply a driver printed as its last line, `{"final": TEXT}` (None: no such line, or no reply)."""
    data = _last_json(stdout)
    final = data.get("final") if data else None
    return final if isinstance(final, str) else None


def json_end(stdout: str) -> AgentEnd | None:
    """An end the driver reported on its last line, `{"final": null, "ended": OUTCOME, "reason": …}`."""
    data = _last_json(stdout) or {}
    ended, reason = data.get("ended"), str(data.get("reason", ""))[:500]
    if ended in ("failed", "iteration_limit"):
        return AgentEnd(ended, reason)
    return None


class CommandAgent:
    """A program of the user's own (`command:` in a config's agent entry)."""

    def __init__(self, argv: list[str], options: Mapping[str, Any], base_dir: Path):
        self.argv = list(argv)
        self.options = dict(options)
        program = Path(argv[0])
        if program.parent != Path():  # a path: the config file's folder's when relative
            self.argv[0] = str(program if program.is_absolute() else base_dir / program)
        self.name = Path(argv[0]).name

    def check(self) -> None:
        program = self.argv[0]
        found = shutil.which(program) if Path(program).name == program else program
        if found is None or not Path(found).exists():
            raise ConfigError(f"command {program!r}: no such program")
        if not os.access(found, os.X_OK) or Path(found).is_dir():
            raise ConfigError(f"command {program!r}: not an executable file")

    def command(self, run: AgentRun) -> list[str]:
        return [*self.argv, run.prompt]

    def environment(self, run: AgentRun) -> dict[str, str]:
        return run_variables(run)

    def final_reply(self, stdout: str) -> str | None:
        if _last_json(stdout) is not None:
            return json_final(stdout)
        return stdout.strip() or None

    def ended(self, stdout: str) -> AgentEnd | None:
        return json_end(stdout)

    def describe(self) -> dict[str, str]:
        """The program's name, and a hash of the program and every script its command line names (an
        interpreter's script too), so a changed agent reads as a changed install."""
        digest = hashlib.sha256()
        scripts = [Path(a) for a in self.argv[1:] if _is_code(Path(a))]
        for path in [Path(shutil.which(self.argv[0]) or self.argv[0]), *scripts]:
            if path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
        shown = scripts[0].name if scripts else self.name
        return {"name": shown, "version": "command", "install_hash": digest.hexdigest()[:16]}


# A file the command names is code when it is executable or a script by its suffix; any other file
# (a log, a pid file the agent writes) changes while it runs and must not read as another install.
_SCRIPT_SUFFIXES = frozenset({".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl"})


def _is_code(path: Path) -> bool:
    return path.is_file() and (path.suffix in _SCRIPT_SUFFIXES or os.access(path, os.X_OK))
