"""Provenance for the report header: which configs, code, backends, models and seeds made the runs.

Only what the results headers recorded is shown. Backend descriptions are flattened to scalar
fields, and any field whose name suggests a credential is dropped, as a second line of defence
(results files never hold keys; the report never reads the environment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalkit.results.runs import Results, RunRow

__all__ = ["BackendInfo", "Provenance", "SourceRun", "fitted_labels", "portable", "provenance", "sim_label"]

_SECRET_WORDS = ("key", "token", "secret", "password", "auth", "credential", "cookie", "env")
_MAX_VALUE = 200
_CODE_FIELDS = (("files_sha256", "files sha256"), ("wheel_sha256", "wheel sha256"))
# an absolute path inside a Python environment: shown from `site-packages/` on
_ENV_PATHS = (
    re.compile(r"(?<![\w.])/[^\s\"'<>]*/(site-packages|dist-packages)/"),
    # evalkit's own package data (a chat template), wherever the checkout that ran it was
    re.compile(r"(?<![\w.])/[^\s\"'<>]*/(evalkit/(?:chat_templates|profiles|templates))/"),
)
_LATER_PATHS = (
    re.compile(r"(?<![\w.])/[^\s\"'<>]*?/(\.venv|venv)/"),
    re.compile(r"(?<![\w.])/(?:root|home/[^/\s]+|Users/[^/\s]+)/()"),
)  # a home directory: ~/


def portable(text: str, root: str | None = None) -> str:
    """`text` without this machine's paths: paths in a Python environment from `site-packages/` (or
    `.venv/`) on, paths in a home directory from `~/` on, and paths under the project `root` relative
    to it. The sha256 fields stay whole."""

    def shorten(text: str, patterns: tuple[re.Pattern[str], ...]) -> str:
        for pattern in patterns:
            text = pattern.sub(lambda m: (m.group(1) or "~") + "/", text)
        return text

    # environment paths first: a venv inside the project would otherwise be cut to a relative path
    # that still names this machine's layout
    text = shorten(text, _ENV_PATHS)
    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    return shorten(text, _LATER_PATHS)


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
    essentials: tuple[tuple[str, str], ...] = ()  # model file, sha256, server build, evalkit, git, date, N, seeds
    sim_label: str = ""  # "SIMULATED", or "SIMULATED (fitted to MODEL from FILES)" for a fitted profile

    @property
    def fitted(self) -> bool:
        return self.sim_label not in ("", "SIMULATED")


@dataclass(frozen=True)
class Provenance:
    files: tuple[str, ...]
    sources: tuple[SourceRun, ...]
    backends: tuple[BackendInfo, ...]
    finished: tuple[str, ...]  # "complete at …" / "interrupted at …", one per footer
    runs_per_cell: tuple[int, ...]
    seeds: tuple[int, ...]
    stacks: tuple[tuple[str, str], ...] = ()  # strategy label -> its guard stack with the options set
    guards: tuple[tuple[str, str], ...] = ()  # guard -> the code it ran (the `forge` strategy: forge-guardrails)


def stack_text(stack: Any) -> str:
    """A guard stack as its config wrote it, on one line: each guard's name and the options it sets
    (a `retry_nudge` with `max_retries: 1` must not read like the default one)."""
    if not isinstance(stack, list):
        return str(stack)
    parts = []
    for item in stack:
        if isinstance(item, dict) and "plugin" in item:
            name, options = str(item["plugin"]), item.get("options")
        elif isinstance(item, dict) and len(item) == 1:
            ((name, options),) = item.items()
        else:
            name, options = str(item), None
        set_here = ", ".join(f"{k}={v!r}" for k, v in options.items()) if isinstance(options, dict) else ""
        parts.append(f"{name}({set_here})" if set_here else name)
    return " + ".join(parts) or "(no guard)"


def _stacks(results: Results[RunRow]) -> tuple[tuple[str, str], ...]:
    # a dict as an ordered set: each stack once, in the order the headers name them
    seen: dict[tuple[str, str], None] = {}
    for header in results.headers:
        strategies = header.config.get("strategies", {})
        for label, stack in strategies.items() if isinstance(strategies, dict) else ():
            seen[(str(label), stack_text(stack))] = None
    return tuple(seen)


def _guards(results: Results[RunRow]) -> tuple[tuple[str, str], ...]:
    """What the guards that wrap someone else's code ran, as the headers recorded it (`guards`)."""
    seen: dict[tuple[str, str], None] = {}
    for header in results.headers:
        for name, info in header.guards.items():
            # a guard that runs only evalkit's own code records nothing here
            if not info:
                continue
            parts = [f"{info.get('package', name)} {info.get('version', '?')}"]
            parts += [f"{k} {info[k]}" for k in ("python", "sha256", "wheel", "url") if info.get(k)]
            code = _code_hashes({k: info.get(k) for k in ("files_sha256", "modified", "missing")})
            parts += [f"{k} {v}" for k, v in code]
            seen[(name, " · ".join(parts))] = None
    return tuple(seen)


def _secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def _flatten(data: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for name, value in data.items():
        # by name: a value cannot tell a key from any other string, and a second defence costs little
        if _secret(str(name)):
            continue
        key = f"{prefix}{name}"
        # one level of nesting: deeper structures (a phase's packages) have readers of their own
        if isinstance(value, dict) and depth < 1:
            out += _flatten(value, key + ".", depth + 1)
        elif isinstance(value, str | int | float | bool) and value != "":
            text = str(value).strip()
            out.append((key, text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE] + "…"))
    return out


def _phase_packages(info: dict[str, Any]) -> list[tuple[str, str]]:
    """The packages each server phase ran (`serve.phases`: a guard proxy's forge-guardrails), with the
    hashes that identify their code (`_code_hashes`)."""
    started = info.get("started_by_evalkit")
    phases = started.get("phases") if isinstance(started, dict) else None
    pairs: list[tuple[str, str]] = []
    for phase in phases if isinstance(phases, list) else []:
        if not isinstance(phase, dict):
            continue
        for package in phase.get("packages") or []:
            if not isinstance(package, dict) or "version" not in package:
                continue
            python = f" (Python {phase['python']})" if phase.get("python") else ""
            pairs.append((f"{phase.get('name', 'phase')} phase", f"{package.get('name')} {package['version']}{python}"))
            pairs += _code_hashes(package)
    return pairs


def _code_hashes(package: dict[str, Any]) -> list[tuple[str, str]]:
    """The hash of the installed files (`evalkit.results.installed_files`) and the files that were not
    as RECORD said, then the wheel's hash. A header written before files were hashed has RECORD's
    hash, which names one install, not the code: shown as that, and only with nothing better."""
    pairs = [(shown, str(package[field])) for field, shown in _CODE_FIELDS if package.get(field)]
    for field in ("modified", "missing"):
        if isinstance(package.get(field), list) and package[field]:
            pairs.append((f"{field} files", ", ".join(map(str, package[field]))))
    # RECORD's hash only as a last resort: it changes with the install's paths, not only with the code
    if not pairs and package.get("record_sha256"):
        pairs.append(("RECORD sha256 (of one install, not of the code)", str(package["record_sha256"])))
    return pairs


def _essentials(info: dict[str, Any], headers: list[Any]) -> tuple[tuple[str, str], ...]:
    """What identifies a backend's runs, in one line: the model file and its whole sha256, the server
    build, the packages its server phases ran, and the evalkit version, git sha, start date, N and
    seeds of the runs of configs that used it."""
    binary = info.get("llama_cpp_bin") if isinstance(info.get("llama_cpp_bin"), dict) else {}
    profile = info.get("profile")
    pairs = [
        # the file's name only: the directory is this machine's, the sha256 below says which file it is
        ("model file", str(info.get("model_path", "")).rsplit("/", 1)[-1]),
        ("sha256", str(info.get("model_sha256", ""))),
        ("profile", str(profile.get("name", "")) if isinstance(profile, dict) else str(profile or "")),
        ("server build", str(info.get("build_info", ""))),
        ("llama.cpp", str(binary.get("version", "")) if isinstance(binary, dict) else ""),
        *_phase_packages(info),
        ("evalkit", ", ".join(dict.fromkeys(h.evalkit_version for h in headers))),
        ("git", ", ".join(dict.fromkeys((h.git_sha or "unknown")[:12] for h in headers))),
        ("date", min(h.started_at for h in headers)[:10] if headers else ""),
        ("N", ", ".join(dict.fromkeys(str(h.runs_per_cell) for h in headers))),
        ("seeds", ", ".join(dict.fromkeys(str(h.seed) for h in headers))),
    ]
    return tuple((k, v) for k, v in pairs if v)


def sim_label(info: dict[str, Any]) -> str:
    """How a simulated backend's results are labelled: the label its description recorded (a fitted
    profile names its model and files); "SIMULATED" for descriptions written before labels were."""
    label = info.get("label")
    return label if isinstance(label, str) and label.startswith("SIMULATED") else "SIMULATED"


def fitted_labels(results: Results[RunRow]) -> dict[str, str]:
    """Backend label -> its label, for the simulated backends whose profile was fitted to a real model."""
    found: dict[str, str] = {}
    for header in results.headers:
        for backend, info in header.backends.items():
            if info.get("simulated") and sim_label(info) != "SIMULATED":
                found.setdefault(backend, sim_label(info))
    return found


def _backends(results: Results[RunRow], root: str | None) -> tuple[BackendInfo, ...]:
    described: dict[str, dict[str, Any]] = {}
    used_by: dict[str, list[Any]] = {}
    for header in results.headers:
        for label, info in header.backends.items():
            # the first header's description of each backend stands for it
            described.setdefault(label, info)
            used_by.setdefault(label, []).append(header)
    # any run of each backend: its model is the same in every one
    cells = {r.cell.backend: r for r in results.runs}
    out = []
    for label in sorted(set(described) | set(cells)):
        info = described.get(label, {})
        run = cells.get(label)
        model = run.cell.model if run else str(info.get("model", "?"))
        details = tuple((k, portable(v, root)) for k, v in _flatten(info) if k not in ("kind", "model", "simulated"))
        simulated = bool(info.get("simulated", run.simulated if run else False))
        out.append(
            BackendInfo(
                label=label,
                kind=str(info.get("kind", "?")),
                model=model,
                simulated=simulated,
                details=details,
                essentials=_essentials(info, used_by.get(label, [])),
                sim_label=sim_label(info) if simulated else "",
            )
        )
    return tuple(out)


def provenance(results: Results[RunRow], root: str | None = None) -> Provenance:
    """`root`: the project's directory; paths under it are shown relative to it."""
    sources = tuple(
        SourceRun(
            config_name=h.config_name,
            config_hash=h.config_hash,
            evalkit_version=h.evalkit_version,
            git_sha=h.git_sha,
            started_at=h.started_at,
            seed=h.seed,
            runs_per_cell=h.runs_per_cell,
            simulated=h.simulated,
            resumed=h.resumed,
        )
        for h in results.headers
    )
    return Provenance(
        files=tuple(portable(p, root) for p in results.paths),
        sources=sources,
        backends=_backends(results, root),
        finished=tuple(f"{f.status} at {f.finished_at} ({f.runs_written} runs)" for f in results.footers),
        runs_per_cell=tuple(sorted({h.runs_per_cell for h in results.headers})),
        seeds=tuple(sorted({h.seed for h in results.headers})),
        stacks=_stacks(results),
        guards=_guards(results),
    )
