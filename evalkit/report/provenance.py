"""Provenance for the report header: which configs, code, backends, models and seeds made the runs.

Only what the results headers recorded is shown. Backend descriptions are flattened to scalar
fields, and any field whose name suggests a credential is dropped, as a second line of defence
(results files never hold keys; the report never reads the environment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.results import Results

__all__ = ["BackendInfo", "Provenance", "SourceRun", "provenance"]

_SECRET_WORDS = ("key", "token", "secret", "password", "auth", "credential", "cookie", "env")
_MAX_VALUE = 200


@dataclass(frozen=True)
class SourceRun:
    """One header: a run of a config (a resumed run appends a header of its own)."""

    config_name: str
    config_hash: str
    evalkit_version: str
    git_sha: str | None
    started_at: str
    seed: int
    runs_per_cell: int
    simulated: bool
    resumed: bool


@dataclass(frozen=True)
class BackendInfo:
    label: str
    kind: str
    model: str
    simulated: bool
    details: tuple[tuple[str, str], ...]  # model hash, server build, profile, ... as recorded


@dataclass(frozen=True)
class Provenance:
    files: tuple[str, ...]
    sources: tuple[SourceRun, ...]
    backends: tuple[BackendInfo, ...]
    finished: tuple[str, ...]  # "complete at …" / "interrupted at …", one per footer
    runs_per_cell: tuple[int, ...]
    seeds: tuple[int, ...]


def _secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def _flatten(data: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in data.items():
        if _secret(str(name)):
            continue
        key = f"{prefix}{name}"
        if isinstance(value, dict) and depth < 1:
            out += _flatten(value, key + ".", depth + 1)
        elif isinstance(value, str | int | float | bool) and value != "":
            text = str(value).strip()
            out.append((key, text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE] + "…"))
    return out


def _backends(results: Results) -> tuple[BackendInfo, ...]:
    described: dict[str, dict[str, Any]] = {}
    for header in results.headers:
        for label, info in header.backends.items():
            described.setdefault(label, info)
    cells = {r.cell.backend: r for r in results.runs}
    out = []
    for label in sorted(set(described) | set(cells)):
        info = described.get(label, {})
        run = cells.get(label)
        model = run.cell.model if run else str(info.get("model", "?"))
        details = tuple((k, v) for k, v in _flatten(info) if k not in ("kind", "model", "simulated"))
        out.append(BackendInfo(label=label, kind=str(info.get("kind", "?")), model=model,
                               simulated=bool(info.get("simulated", run.simulated if run else False)),
                               details=details))
    return tuple(out)


def provenance(results: Results) -> Provenance:
    sources = tuple(SourceRun(
        config_name=h.config_name, config_hash=h.config_hash, evalkit_version=h.evalkit_version,
        git_sha=h.git_sha, started_at=h.started_at, seed=h.seed, runs_per_cell=h.runs_per_cell,
        simulated=h.simulated, resumed=h.resumed) for h in results.headers)
    return Provenance(
        files=tuple(results.paths),
        sources=sources,
        backends=_backends(results),
        finished=tuple(f"{f.status} at {f.finished_at} ({f.runs_written} runs)" for f in results.footers),
        runs_per_cell=tuple(sorted({h.runs_per_cell for h in results.headers})),
        seeds=tuple(sorted({h.seed for h in results.headers})),
    )
