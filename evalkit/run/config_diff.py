"""What a resume compares: the fields of a run config that decide the runs.

A results header keeps the config that wrote it. Resuming compares that config with the one given,
field by field, after both went through today's model (so a field added since, at its default,
reads the same on both sides), leaving out what only decides how fast the runs go (concurrency,
timeouts, retries) or what is only a label (output, description).

A backend entry the stored config does not have is not a change: its cells are new, and every run
already in the file was asked and answered as before (a run's seed comes from its own backend label,
so an added entry moves no other run). So ADR-013's file grows a column with `--resume`. A backend
that is gone, or one whose fields differ, is a change.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from evalkit.results.secrets import public_config
from evalkit.run.config import RunConfig, parse_strategy_specs

__all__ = [
    "OPERATIONAL",
    "agent_changes",
    "changed_fields",
    "differing_fields",
    "guard_changes",
    "phase_changes",
    "run_defining",
]

# Fields that change how a run is carried out, never what it answers.
OPERATIONAL = {
    "top": {"output", "description", "runs", "allow_state_modules", "side_by_side", "max_infra_error_rate"},
    "backend": {"concurrency", "timeout_s", "retry"},
    "serve": {"startup_timeout_s", "threads"},  # threads: how fast llama-server computes, not what
    "endpoint": {"concurrency"},
    "phase": {"timeout_s", "port", "ready"},  # a serve phase's; its llama_server's startup_timeout_s too
    "agent": {"time_limit_s", "grace_s"},  # when a stuck agent is stopped (its run is an infra error)
}


def run_defining(dumped: dict[str, Any]) -> dict[str, Any]:
    """A JSON-mode config dump without its operational fields (see OPERATIONAL)."""
    out = {k: v for k, v in dumped.items() if k not in OPERATIONAL["top"]}
    out["backends"] = [_backend(b) for b in dumped.get("backends") or []]
    agents = out.pop("agents", None)
    if isinstance(agents, dict) and agents:  # absent and empty are one: no agent column
        out["agents"] = {
            k: {f: v for f, v in a.items() if f not in OPERATIONAL["agent"]} if isinstance(a, dict) else a
            for k, a in agents.items()
        }
    if isinstance(out.get("strategies"), dict):  # `retry_nudge` and `{retry_nudge: {}}` are one guard
        out["strategies"] = {
            label: [list(spec) for spec in parse_strategy_specs(label, specs)] if isinstance(specs, list) else specs
            for label, specs in out["strategies"].items()
        }
    return out


def _backend(entry: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in entry.items() if k not in OPERATIONAL["backend"]}
    if isinstance(out.get("serve"), dict):
        out["serve"] = {k: v for k, v in out["serve"].items() if k not in OPERATIONAL["serve"]}
        if isinstance(out["serve"].get("phases"), list):
            out["serve"]["phases"] = [_phase(p) for p in out["serve"]["phases"]]
    if isinstance(out.get("endpoints"), list):
        out["endpoints"] = [{k: v for k, v in e.items() if k not in OPERATIONAL["endpoint"]} for e in out["endpoints"]]
    return out


def _phase(phase: Any) -> Any:
    if not isinstance(phase, dict):
        return phase
    out = {k: v for k, v in phase.items() if k not in OPERATIONAL["phase"]}
    if isinstance(out.get("llama_server"), dict):
        out["llama_server"] = {k: v for k, v in out["llama_server"].items() if k not in OPERATIONAL["serve"]}
    return out


def changed_fields(stored: dict[str, Any], config: RunConfig) -> list[str]:
    """The fields (dotted paths, backends by label) in which `config` would run differently from the
    config stored in a results header; empty when only operational fields or added defaults differ."""
    try:
        # today's model fills in fields added since the file was written, at their defaults
        old = RunConfig.model_validate(stored).model_dump(mode="json")
    except ValidationError:
        # a header today's model refuses is compared as written: its differences are still named
        old = stored
    new = config.model_dump(mode="json")
    # both through `public_config`: the header holds blanked secrets, so the new config must too
    return _diff(run_defining(public_config(old)), run_defining(public_config(new)), "")


def differing_fields(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """The run-defining fields in which two stored configs (results headers') differ."""
    sides = []
    for stored in (first, second):
        try:
            sides.append(RunConfig.model_validate(stored).model_dump(mode="json"))
        except ValidationError:
            sides.append(stored)
    return _diff(run_defining(public_config(sides[0])), run_defining(public_config(sides[1])), "")


def _diff(old: Any, new: Any, path: str) -> list[str]:
    if path == "agents" and isinstance(new, dict) and isinstance(old, dict | None):
        # agents by label, as backends: an added agent column is new cells only; a removed one is a change
        return [p for label in sorted(old or {}) for p in _diff(old[label], new.get(label), f"agents.{label}")]  # type: ignore[index]
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        return [p for k in keys for p in _diff(old.get(k), new.get(k), f"{path}.{k}" if path else k)]
    if path == "backends" and isinstance(old, list) and isinstance(new, list):
        return _diff_backends(old, new)

    return [] if old == new else [path]


def _diff_backends(old: list[Any], new: list[Any]) -> list[str]:
    """Backends compared by label, so a reordered list is no change, nor an added one (new cells);
    a removed one is."""
    by_label = [{str(b.get("label")): b for b in side if isinstance(b, dict)} for side in (old, new)]
    labels = sorted(by_label[0])
    return [p for label in labels for p in _diff(by_label[0].get(label), by_label[1].get(label), f"backends[{label}]")]


def phase_changes(before: list[Any], now: list[Any]) -> list[str]:
    """How the server phases a header recorded (`started_by_evalkit.phases`) differ from those of
    another: a command line (portable paths), a venv (as the config's variables chose it), the Python
    version, a package, its version or its installed files (`files_sha256`, where both have it)."""
    # phases are compared by position: a phase added or removed shifts every one after it
    if len(before) != len(now):
        return [f"{len(before)} server phases in the runs already in the file, {len(now)} now"]
    out: list[str] = []
    for old, new in zip(before, now, strict=True):
        if not isinstance(old, dict) or not isinstance(new, dict):
            continue
        where = f"phase {new.get('name')!r}"
        # the packages first: a release is what a reader recognises
        out += [f"{where}: {change}" for change in _package_changes(old.get("packages"), new.get("packages"))]
        if old.get("python") and new.get("python") and old["python"] != new["python"]:
            out.append(f"{where}: Python {old['python']} in the runs already in the file, {new['python']} now")
        for field in ("venv", "command"):  # a header from before `venv` was recorded has none: not a change
            if field in old and field in new and _words(old[field]) != _words(new[field]):
                was, now_ = _words(old[field]), _words(new[field])
                out.append(f"{where}: its {field} was {was} in the runs already in the file, {now_} now")
    return out


def guard_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """How the code of the guards that wrap someone else's (a header's `guards`: the in-process
    `forge` strategy's forge-guardrails) differs between two headers: a version or installed files."""
    out = []
    # a guard on one side only is a stack added or removed, which the config's diff names already
    for name in sorted(set(before) & set(now)):
        sides = [info if isinstance(info, dict) else {} for info in (before[name], now[name])]
        packages = [[{**info, "name": info.get("package", name)}] if "version" in info else [] for info in sides]
        out += [f"guard {name!r}: {change}" for change in _package_changes(*packages)]
    return out


def agent_changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """How the agents two headers describe (`agents`, by column label) differ: another agent, release
    or install (`install_hash`). A label on one side only is not a change (an added column is new cells)."""
    out = []
    for label in sorted(set(before) & set(now)):
        old, new = (info if isinstance(info, dict) else {} for info in (before[label], now[label]))
        was, is_ = (f"{info.get('name', label)} {info.get('version', 'unknown')}" for info in (old, new))
        if was != is_:
            out.append(f"agent {label!r}: {was} in the runs already in the file, {is_} now")
        elif old.get("install_hash") != new.get("install_hash"):
            out.append(
                f"agent {label!r}: {is_} with another install (install_hash {old.get('install_hash')} in the runs "
                f"already in the file, {new.get('install_hash')} now)"
            )
    return out


def _words(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value or "")


def _package_changes(before: Any, now: Any) -> list[str]:
    if not isinstance(before, list) or not isinstance(now, list):
        return []  # a probe that failed on either side: nothing to compare
    sides = [{str(p.get("name")): p for p in side if isinstance(p, dict) and "version" in p} for side in (before, now)]
    out = []
    for name in sorted(set(sides[0]) | set(sides[1])):
        old, new = sides[0].get(name), sides[1].get(name)
        if old is None or new is None:
            was = f"{name} {old['version']}" if old else f"no {name}"
            out.append(f"{was} in the runs already in the file, {f'{name} ' + new['version'] if new else 'none'} now")
        elif old["version"] != new["version"]:
            out.append(f"{name} {old['version']} in the runs already in the file, {new['version']} now")
        # a header from before files were hashed has none: only two hashes can disagree
        elif old.get("files_sha256") and new.get("files_sha256") and old["files_sha256"] != new["files_sha256"]:
            out.append(
                f"{name} {new['version']} with other installed files (files_sha256 {old['files_sha256'][:12]}… in "
                f"the runs already in the file, {new['files_sha256'][:12]}… now)"
            )
    return out
