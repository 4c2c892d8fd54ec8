"""Which Forge (PyPI `forge-guardrails`) a run used: the record `scripts/install-forge.sh` writes.

Each venv the script makes, `.forge/<version>/`, holds `forge-wheel.json`:

    {"package": "forge-guardrails", "version": "0.10.0",
     "wheel": "forge_guardrails-0.10.0-py3-none-any.whl", "sha256": "<64 hex digits>",
     "url": "https://files.pythonhosted.org/.../forge_guardrails-0.10.0-py3-none-any.whl",
     "requires_python": ">=3.12", "python": "3.12.1", "pinned": true}

`sha256` is the wheel's, as downloaded into `.forge/wheels/` and installed from there; `url` is where
pip found it (null when it came from a local folder: no path of the machine is kept); `pinned`, whether
the script knew that release's hash and installed only that wheel (absent in records written before).
A results header names the version, the wheel's hash and the hash of the installed files
(`evalkit.results.installed_files`: what really runs, each file checked against RECORD) through
`installed_forge()` (docs/guards.md, "Forge").
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from evalkit.errors import ConfigError
from evalkit.results.installed_files import installed_files

__all__ = ["PACKAGE", "WHEEL_RECORD", "ForgeWheel", "installed_forge", "read_wheel_record"]

PACKAGE = "forge-guardrails"
WHEEL_RECORD = "forge-wheel.json"


@dataclass(frozen=True)
class ForgeWheel:
    package: str
    version: str
    wheel: str
    sha256: str
    url: str | None
    requires_python: str | None
    python: str
    pinned: bool | None = None

    def provenance(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if not (k == "pinned" and v is None)}


def read_wheel_record(venv: str | Path) -> ForgeWheel | None:
    """The record in `venv` (a `.forge/<version>/` folder), or None when it has none."""
    path = Path(venv) / WHEEL_RECORD
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        # `pinned` came later: a record written before it is read without it, not refused
        optional = {"pinned"}
        return ForgeWheel(
            **{name: data[name] for name in ForgeWheel.__dataclass_fields__ if name not in optional or name in data}
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a forge-wheel record ({type(exc).__name__}: {exc})") from exc


def installed_forge(prefix: str | Path = sys.prefix, path: list[str] | None = None) -> dict[str, Any]:
    """What this interpreter runs: forge-guardrails' version, the hash of its installed files (with
    any file that is not as its RECORD says) and, in a venv that install-forge.sh made for that
    version, the wheel's sha256 and origin. Empty when forge-guardrails is not installed. `prefix`
    and `path` (where to look for distributions; default sys.path) are seams for tests."""
    found = next(iter(distributions(name=PACKAGE, path=path if path is not None else sys.path)), None)
    if found is None:
        return {}
    files = installed_files(found)
    record = read_wheel_record(prefix)
    # a record of another version is stale (pip upgraded the venv since): its wheel hash is not this code's
    if record is not None and record.version == found.version:
        return {**record.provenance(), **files}
    python = ".".join(map(str, sys.version_info[:3]))
    return {"package": PACKAGE, "version": found.version, "sha256": None, "python": python, **files}
