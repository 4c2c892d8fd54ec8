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

__all__ = ["OPERATIONAL", "changed_fields", "differing_fields", "run_defining"]

# Fields that change how a run is carried out, never what it answers.
OPERATIONAL = {
    "top": {"output", "description", "runs", "allow_state_modules", "side_by_side"},
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
        old = stored
    new = config.model_dump(mode="json")
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
