"""A user cache of scenario files already parsed and checked, so that `evalkit list` and
`evalkit validate scenarios/` do not re-read and re-check 100 unchanged files on every call (issue 31:
`list` took 11 × `evalkit --help`, nearly all of it YAML with line numbers, pydantic and the
JSON-Schema checks of every tool).

An entry is found by the SHA-256 of the file's bytes and the state modules allowed, in a cache file
stamped with evalkit's version and the size and modification time of each of its source files (an
edited checkout counts as another evalkit): any change to the file's content, to the allow-list or
to evalkit gives no entry, and the file is loaded and checked as if there were no cache. An entry holds what `list`
shows (id, family, description) and whether the scenario passed `validate`'s reference check. That
check runs the stateful mocks' code (BFCL's classes), so the entry also records the version of each
package the mocks come from, and counts only while the same versions are installed. An entry of the
wrong shape, a cache file that is not JSON, or one that cannot be written is ignored: the cache
only ever saves time, it never decides. Only files that loaded without error are stored.

`cached_text` keeps, under the same stamp, text that depends on evalkit's code alone: the listings
of `evalkit list strategies` and `list backends`, which otherwise import every guard and backend.

The folder: `$EVALKIT_CACHE_DIR` if set (`off` turns the cache off), else `$XDG_CACHE_HOME/evalkit`,
else `~/.cache/evalkit`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._version import __version__

if TYPE_CHECKING:
    from evalkit.scenario.model import Scenario

__all__ = ["CACHE_ENV", "ScenarioCache", "Summary", "cache_dir", "cached_text", "code_stamp", "scenario_summaries"]

CACHE_ENV = "EVALKIT_CACHE_DIR"
_FORMAT = 1  # of the cache file; a change of it, like one of evalkit's version, starts a new file


def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is turned off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return None if chosen in ("", "off") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalkit"


@dataclass(frozen=True)
class Summary:
    """What `list` shows of a scenario, and whether `validate`'s reference check passed."""

    id: str
    family: str
    description: str
    referenced: bool = False


def code_stamp() -> str:
    """evalkit's version and, per source file of the package, its path, size and modification time."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for folder, dirs, files in os.walk(package):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith((".py", ".yaml", ".jinja", ".j2"))):
            with contextlib.suppress(OSError):
                stat = os.stat(os.path.join(folder, name))
                digest.update(f"{folder}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _read_stamped(file: Path | None, stamp: str) -> dict[str, Any]:
    """The entries of a cache file made under `stamp`; nothing from any other, or from a damaged one."""
    if file is None:
        return {}
    try:
        data = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("stamp") != stamp or not isinstance(data.get("entries"), dict):
        return {}
    entries: dict[str, Any] = data["entries"]
    return entries


def _write_stamped(file: Path, stamp: str, entries: dict[str, Any]) -> None:
    """Replace the cache file whole (another evalkit may be reading it); a folder that cannot take it
    is no error."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", dir=file.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"stamp": stamp, "entries": entries}, out)
        os.replace(tmp, file)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def cached_text(name: str, make: Callable[[], str]) -> str:
    """`make()`, kept in the cache for as long as evalkit's code is unchanged."""
    folder = cache_dir()
    file = folder / f"text-{_FORMAT}.json" if folder else None
    stamp = code_stamp()
    entries = _read_stamped(file, stamp)
    text = entries.get(name)
    if isinstance(text, str):
        return text
    text = make()
    if file is not None:
        _write_stamped(file, stamp, {**entries, name: text})
    return text


def _version_of(module: str) -> str | None:
    from importlib import metadata

    for name in (module, module.replace("_", "-")):
        with contextlib.suppress(metadata.PackageNotFoundError):
            return metadata.version(name)
    return None


class ScenarioCache:
    """The cached summaries of scenario files, for one allow-list of state modules."""

    def __init__(self, allow_state_modules: list[str] | tuple[str, ...] = (), folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else cache_dir()
        self.allowed = ",".join(sorted(allow_state_modules))
        self.file = self.folder / f"scenarios-{_FORMAT}.json" if self.folder else None
        self.stamp = code_stamp()
        self._entries: dict[str, Any] = _read_stamped(self.file, self.stamp)
        self._changed = False

    def key(self, content: bytes) -> str:
        return hashlib.sha256(content).hexdigest() + "|" + self.allowed

    def get(self, content: bytes) -> Summary | None:
        """The summary stored for a file of exactly this content, if any is usable."""
        entry = self._entries.get(self.key(content))
        if not isinstance(entry, dict):
            return None
        fields = [entry.get(name) for name in ("id", "family", "description")]
        versions = entry.get("state_versions")
        if not all(isinstance(f, str) for f in fields) or not isinstance(versions, dict):
            return None  # damaged: load the file instead
        referenced = entry.get("referenced") is True and all(
            isinstance(v, str) and _version_of(str(m)) == v for m, v in versions.items()
        )
        return Summary(str(fields[0]), str(fields[1]), str(fields[2]), referenced)

    def put(self, content: bytes, scenario: Scenario, *, referenced: bool = False) -> None:
        """Store a scenario that loaded (and, with `referenced`, passed the reference check)."""
        modules = sorted({s.cls.partition(":")[0].split(".")[0] for s in scenario.state})
        versions = {m: _version_of(m) for m in modules}
        entry = {
            "id": scenario.id,
            "family": scenario.family,
            "description": scenario.description,
            "referenced": referenced and all(versions.values()),
            "state_versions": {m: v for m, v in versions.items() if v},
        }
        if self._entries.get(self.key(content)) != entry:
            self._entries[self.key(content)] = entry
            self._changed = True

    def save(self) -> None:
        """Write the cache back if anything was added; a folder that cannot take it is no error."""
        if self.file is None or not self._changed:
            return
        _write_stamped(self.file, self.stamp, self._entries)
        self._changed = False


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def scenario_summaries(
    paths: list[Path], allow_state_modules: list[str] | tuple[str, ...] = (), cache: ScenarioCache | None = None
) -> list[Summary]:
    """The summaries of the scenario files `paths`, from the cache where it has them, else loaded (and
    stored); ids must be unique across them, as `load_scenarios` requires."""
    from evalkit.errors import ScenarioError

    cache = cache if cache is not None else ScenarioCache(allow_state_modules)
    out: list[Summary] = []
    seen: dict[str, str] = {}
    try:
        for path in paths:
            content = _content(path)
            summary = cache.get(content) if content is not None else None
            if summary is None:
                from evalkit.scenario.model import load_scenario

                scenario = load_scenario(path, allow_state_modules)  # an unreadable file: its error
                if content is not None:
                    cache.put(content, scenario)
                summary = Summary(scenario.id, scenario.family, scenario.description)
            if summary.id in seen:
                raise ScenarioError(
                    str(path), f"duplicate scenario id {summary.id!r} (also in {seen[summary.id]})", field="id"
                )
            seen[summary.id] = str(path)
            out.append(summary)
    finally:
        cache.save()
    return out
