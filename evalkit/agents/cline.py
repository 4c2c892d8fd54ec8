"""Cline CLI (npm `cline`) as an agent under test, unchanged: act mode, or yolo mode (`yolo: true`).

    agents:
      cline-act:  {agent: cline, budget: 30, time_limit_s: 120}
      cline-yolo: {agent: cline, options: {yolo: true}, budget: 30, time_limit_s: 120}

Options: `version` (default DEFAULT_VERSION, installed by `bash scripts/install-cline.sh VERSION`),
`yolo`, `retries` (Cline's `--retries`, its limit of consecutive mistakes; default Cline's own 6)
and `install_dir` (the install's folder, relative to the config file's; default
`.agents/cline/<version>` in the working folder or above the config file).

Each run gets its own Cline state under the run's fresh HOME (`--config HOME/.cline`, `--data-dir
HOME/.cline/data`): the provider file points Cline at the run's model URL and the MCP settings at
the run's tools over streamable HTTP. What the code relies on (file formats, `--json` events, which
signal stops Cline) was measured on Cline 3.0.65 and is written down in docs/agents.md, "Cline".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from evalkit._model import StrictModel, first_problem
from evalkit.agents.base import AgentEnd, AgentRun
from evalkit.errors import ConfigError

__all__ = [
    "DEFAULT_VERSION",
    "ClineAgent",
    "ClineOptions",
    "events",
    "final_reply",
    "find_install",
    "finish_reason",
    "mcp_settings",
    "provider_settings",
]

DEFAULT_VERSION = "3.0.65"
INSTALL_RECORD = "install.json"  # written by scripts/install-cline.sh
PROVIDER = "openai-compatible"
TERMINAL_TOOL = "submit_and_exit"  # yolo mode's only way to finish
# Cline rewrites a provider file without these fields to its own cloud provider (docs/agents.md)
_PROVIDERS_VERSION = 1
_UPDATED_AT = "2026-01-01T00:00:00.000Z"


class ClineOptions(StrictModel):
    version: str = Field(DEFAULT_VERSION, pattern=r"^[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.]+)?$")
    yolo: bool = False
    retries: int = Field(6, ge=1, le=1000)
    install_dir: str | None = None


def provider_settings(run: AgentRun) -> dict[str, Any]:
    """`settings/providers.json`: the run's model URL as Cline's OpenAI-compatible provider."""
    settings = {"provider": PROVIDER, "apiKey": run.api_key, "model": run.model, "baseUrl": run.model_base_url}
    return {
        "version": _PROVIDERS_VERSION,
        "lastUsedProvider": PROVIDER,
        "modes": {},
        "providers": {PROVIDER: {"settings": settings, "updatedAt": _UPDATED_AT, "tokenSource": "manual"}},
    }


def mcp_settings(run: AgentRun) -> dict[str, Any]:
    """`settings/cline_mcp_settings.json`: the run's tools, one server over streamable HTTP."""
    return {"mcpServers": {run.mcp_server_name: {"transport": {"type": "streamableHttp", "url": run.mcp_url}}}}


def events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of `--json` output, one a line; anything else (a line cut by the runner's
    bounded buffer, a stray message) is passed over."""
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _run_result(stdout: str) -> dict[str, Any] | None:
    found = None
    for event in events(stdout):
        if event.get("type") == "run_result":
            found = event
    return found


def finish_reason(stdout: str) -> str | None:
    """`completed`, `aborted` (its mistake limit) or `error` (the model API failed after Cline's own
    retries); None when Cline printed no `run_result` (it was interrupted: SIGINT ends it silently)."""
    result = _run_result(stdout)
    reason = result.get("finishReason") if result else None
    return reason if isinstance(reason, str) else None


def _submitted(stdout: str) -> str | None:
    """The summary of the last `submit_and_exit` call Cline ran (yolo mode's answer)."""
    summary = None
    for event in events(stdout):
        inner = event.get("event") if event.get("type") == "agent_event" else None
        if isinstance(inner, dict) and inner.get("type") == "content_start" and inner.get("toolName") == TERMINAL_TOOL:
            given = inner.get("input")
            if isinstance(given, dict) and isinstance(given.get("summary"), str):
                summary = given["summary"]
    return summary


def final_reply(stdout: str) -> str | None:
    """The model's last reply when Cline completed: in yolo mode the summary it submitted, else the
    `run_result` text (the last text reply). None when it did not complete: an aborted run's text
    is empty and an errored run's is Cline's own error message, neither the model's."""
    result = _run_result(stdout)
    if result is None or result.get("finishReason") != "completed":
        return None
    summary = _submitted(stdout)
    if summary is not None:
        return summary
    text = result.get("text")
    return text if isinstance(text, str) and text.strip() else None


def _last_error(stdout: str) -> str:
    message = ""
    for event in events(stdout):
        inner = event.get("event") if event.get("type") == "agent_event" else None
        if isinstance(inner, dict) and inner.get("type") == "error" and isinstance(inner.get("error"), dict):
            message = str(inner["error"].get("message", ""))
    return " ".join(message.split())[:300]


@cache
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _options(options: Mapping[str, Any]) -> ClineOptions:
    try:
        return ClineOptions.model_validate(dict(options))
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ConfigError(f"options.{problem.field}: {problem.message}") from None


def find_install(version: str, base_dir: Path, cwd: Path) -> Path | None:
    """`.agents/cline/<version>` as scripts/install-cline.sh makes it: in the working folder (a
    checkout's root), else in the config file's folder or one above it."""
    relative, base = Path(".agents", "cline", version), base_dir.resolve()
    for folder in (cwd, base, *base.parents):
        if (folder / relative / INSTALL_RECORD).is_file():
            return folder / relative
    return None


class ClineAgent:
    """Cline CLI, one process per run (registered as `cline` in evalkit.agents.registry)."""

    def __init__(self, options: Mapping[str, Any], base_dir: Path):
        self.options = _options(options)
        self.name = "cline"  # one agent; its mode is in describe()
        given = self.options.install_dir
        self.folder = (
            (base_dir / given).resolve() if given else find_install(self.options.version, base_dir, Path.cwd())
        )

    def _install(self) -> tuple[Path, dict[str, Any]]:
        """The install's binary and record; a one-line `ConfigError` naming the install command."""
        version = self.options.version
        again = f"run: bash scripts/install-cline.sh {version}"
        if self.folder is None or not (self.folder / INSTALL_RECORD).is_file():
            where = self.options.install_dir or f".agents/cline/{version}"
            raise ConfigError(f"cline {version} is not installed (no {where}/{INSTALL_RECORD}): {again}")
        record_path = self.folder / INSTALL_RECORD
        try:
            record = json.loads(record_path.read_text())
            binary = self.folder / str(record["binary"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{record_path}: not an install record ({exc}): {again}") from None
        if record.get("version") != version:
            raise ConfigError(f"{record_path}: records cline {record.get('version')}, not {version}: {again}")
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise ConfigError(f"{binary}: not an executable file: {again}")
        return binary, record

    def check(self) -> None:
        self._install()

    def command(self, run: AgentRun) -> list[str]:
        binary, _ = self._install()
        config = run.home / ".cline"
        settings = config / "data" / "settings"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "providers.json").write_text(json.dumps(provider_settings(run), indent=2) + "\n")
        (settings / "cline_mcp_settings.json").write_text(json.dumps(mcp_settings(run), indent=2) + "\n")
        # Cline refuses a prompt without whitespace ("Unknown command or unquoted prompt") and trims
        # the one added; `--` keeps a prompt that starts with "-" or a subcommand's name a prompt
        prompt = run.prompt if any(c.isspace() for c in run.prompt) else run.prompt + " "
        return [
            str(binary),
            "--json",
            *(["--yolo"] if self.options.yolo else []),
            "--retries",
            str(self.options.retries),
            "--config",
            str(config),
            "--data-dir",
            str(config / "data"),
            "--cwd",
            str(run.workdir),
            "--",
            prompt,
        ]

    def environment(self, run: AgentRun) -> dict[str, str]:
        # the same file as under --data-dir: a variable of the user's own could point elsewhere
        return {"CLINE_MCP_SETTINGS_PATH": str(run.home / ".cline" / "data" / "settings" / "cline_mcp_settings.json")}

    def final_reply(self, stdout: str) -> str | None:
        return final_reply(stdout)

    def placeholders(self, run: AgentRun) -> dict[str, str]:
        """Cline's system prompt says the day, `Date: MM/DD/YYYY` (docs/agents.md, "Cline"); a run
        that crosses midnight keeps the date it started with unreplaced."""
        return {"Date: " + date.today().strftime("%m/%d/%Y"): "Date: {date}"}

    def ended(self, stdout: str) -> AgentEnd | None:
        """Cline's mistake limit (`--retries`) ends a run `aborted`, with exit status 0."""
        if finish_reason(stdout) != "aborted":
            return None
        why = _last_error(stdout)
        limit = f"Cline aborted the run at its mistake limit (--retries {self.options.retries})"
        return AgentEnd("failed", f"{limit}: {why}" if why else limit)

    def describe(self) -> dict[str, str]:
        binary, record = self._install()
        stat = binary.stat()
        return {
            "name": self.name,
            "version": str(record.get("version")),
            "install_hash": "sha256:" + _sha256(binary, stat.st_size, stat.st_mtime_ns),
            "mode": "yolo" if self.options.yolo else "act",
            "retries": str(self.options.retries),
        }
