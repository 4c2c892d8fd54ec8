"""Which Python packages a server phase runs: versions and hashes for the results header.

The phase's own interpreter is asked (its venv, not evalkit's), for the distribution that provides the
module a `python -m MODULE` command runs plus the phase's `packages:`. Each comes back with its version,
the hash of its installed files, each checked against its `RECORD` (`evalkit.results.installed_files`:
the same for two installs of one wheel, changed by an edited file, which is named under `modified`)
and, when pip recorded the archive it installed from (`direct_url.json`), that wheel's sha256.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from evalkit.results import installed_files as installed_files_module

__all__ = ["interpreter_of", "package_versions"]

_PROBE = r"""
names, modules = json.loads(sys.argv[1]), json.loads(sys.argv[2])
provides = md.packages_distributions()
wanted = list(dict.fromkeys([d for m in modules for d in provides.get(m.split(".")[0], [])] + names))
out = []
for name in wanted:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        out.append({"name": name, "error": "not installed"})
        continue
    info = {"name": dist.metadata["Name"], "version": dist.version, **installed_files(dist)}
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    hashes = (direct.get("archive_info") or {}).get("hashes") or {}
    if "sha256" in hashes:
        info["wheel_sha256"] = hashes["sha256"]
    out.append(info)
print(json.dumps({"python": sys.version.split()[0], "packages": out}))
"""


def _probe() -> str:
    """The probe's program: installed_files.py (standard library only) and the loop above."""
    source = Path(installed_files_module.__file__).read_text(encoding="utf-8")
    return "\n".join([source, "import sys", "import importlib.metadata as md", _PROBE])


def interpreter_of(argv: list[str], fallback: str) -> tuple[str, list[str]]:
    """The Python a command line runs in (its program when that is a `python`, else `fallback`) and
    the modules it runs with `-m`."""
    program = Path(argv[0]).name
    if not program.startswith("python"):
        return fallback, []
    modules = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-m"]
    return argv[0], modules[:1]


def package_versions(python: str, modules: list[str], names: list[str]) -> dict[str, Any]:
    """`{"python": "3.12.1", "packages": [{name, version, files_sha256, files, wheel_sha256?}, ...]}`, or
    `{"error": ...}`: provenance, so a probe that fails is noted rather than fatal."""
    try:
        done = subprocess.run(
            [python, "-c", _probe(), json.dumps(names), json.dumps(modules)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": f"could not ask {Path(python).name} for its packages: {exc}"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": f"package probe failed: {lines[-1] if lines else done.returncode}"}
    result: dict[str, Any] = json.loads(done.stdout)
    return result
