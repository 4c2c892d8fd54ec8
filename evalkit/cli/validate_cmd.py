"""`evalkit validate PATH...`: check scenario and config files without running anything.

Each file is checked as the kind of YAML evalkit reads that its top-level keys say it is, whatever
folder it is in: a run config (`backends` or `strategies`), a simulated profile (`tool_step`, as
`sim fit` writes), a published table (`rows`, for `report --published`), a gate config (only keys
of `gate --config`), or else a scenario. A run
config gets the same checks as `evalkit run` does before it starts (`preflight`), except that a
plugin guard is only looked up, never imported: nothing from a config executes here. A config that
is valid but needs what this machine lacks to run (a model's package, a phase's venv, Python 3.12
with Forge: `NotInstalled`) passes, with a note naming what. A scenario's
stateful mock classes must be BFCL's or from a module named with `--allow-state-module` (or in the
config's `allow_state_modules`); only those are imported, to run the reference through them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.options import PATH, add_allow_state_module
from evalkit.errors import ConfigError, EvalkitError, NotInstalled
from evalkit.results.escaping import plural
from evalkit.scenario.cache import ScenarioCache, Summary

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Check scenario and run config files without running anything: schema, fields, tool "
        "schemas, each scenario's reference solution against its own mocks and check, and a config's "
        "scenarios, backends and guard stacks (plug-ins are looked up, never imported). Errors name "
        "the file, the field and the line."
    )
    p.add_argument("paths", nargs="+", type=PATH)
    add_allow_state_module(p)
    p.set_defaults(handler=run)


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        found = sorted(path.rglob("*.yaml")) + sorted(path.rglob("*.yml")) if path.is_dir() else [path]
        if not found:  # "0 of 0 files valid" would pass a CI step that checked nothing
            raise ConfigError(f"{path}: no *.yaml or *.yml files in this folder: nothing to validate")
        out.extend(found)
    return out


# GateConfig's fields, named here: importing evalkit.gate loads scipy, which validate never needs unless it
# meets a gate config (tests/cli/test_messages.py holds the two equal)
GATE_KEYS = frozenset(
    {
        "allow_unjudged",
        "alpha",
        "floor",
        "floors",
        "level",
        "margin",
        "match_model",
        "max_infra_error_rate",
        "metric",
        "pairing",
        "require_evidence",
        "sequential",
        "stratified",
        "test",
    }
)


def _kind(path: Path) -> str:
    """Which kind of evalkit YAML `path` holds, by its top-level keys (a scenario has none of theirs)."""
    from evalkit._yaml import read_yaml

    data = read_yaml(path).data
    keys = set(data) if isinstance(data, dict) else set()
    if keys & {"backends", "strategies"}:
        return "run config"
    if "tool_step" in keys:
        return "simulated profile"
    if "rows" in keys:
        return "published table"
    if keys and keys <= GATE_KEYS:
        return "gate config"
    return "scenario"


def _unique(path: Path, scenario_id: str, seen: dict[str, Path]) -> None:
    if scenario_id in seen:
        raise EvalkitError(f"{path}: id: duplicate scenario id {scenario_id!r} (also in {seen[scenario_id]})")
    seen[scenario_id] = path


def _check_scenario(path: Path, allowed: list[str], seen: dict[str, Path], cache: ScenarioCache) -> None:
    from evalkit.judge.reference_check import reference_problems
    from evalkit.scenario.model import load_scenario

    scenario = load_scenario(path, allowed)
    _unique(path, scenario.id, seen)
    problems = reference_problems(scenario)  # the reference, through its own mocks and check
    if problems:
        raise EvalkitError(f"{path}: " + "; ".join(problems))
    cache.put(path.read_bytes(), scenario, referenced=True)


def _cached(path: Path, cache: ScenarioCache) -> Summary | None:
    """A scenario file of exactly this content that passed every check before (evalkit.scenario.cache)."""
    try:
        summary = cache.get(path.read_bytes())
    except OSError:
        return None
    return summary if summary is not None and summary.referenced else None


def _check(path: Path, kind: str, allowed: list[str], seen: dict[str, Path], cache: ScenarioCache) -> None:
    if kind == "run config":
        from evalkit.run.config import load_config
        from evalkit.run.preflight import preflight

        preflight(load_config(path).allowing_state_modules(allowed), import_plugins=False)
    elif kind == "simulated profile":
        from evalkit.backends.sim_profile import load_profile

        load_profile(str(path))
    elif kind == "published table":
        from evalkit.report.published import load_published

        load_published(path)
    elif kind == "gate config":
        from evalkit.gate.config import load_gate_config

        load_gate_config(path)
    else:
        _check_scenario(path, allowed, seen, cache)


def _validate(path: Path, allowed: list[str], seen: dict[str, Path], cache: ScenarioCache) -> str:
    """The kind of `path`, once it passed its checks (or an EvalkitError naming file and field)."""
    summary = _cached(path, cache)
    if summary is not None:
        _unique(path, summary.id, seen)
        return "scenario"
    kind = _kind(path)
    _check(path, kind, allowed, seen, cache)
    return kind


def run(args: argparse.Namespace) -> int:
    files = _files(args.paths)
    allowed: list[str] = args.allow_state_module
    seen: dict[str, Path] = {}
    kinds: dict[str, int] = {}
    bad = needs = 0
    cache = ScenarioCache(allowed)
    for path in files:
        try:
            kind = _validate(path, allowed, seen, cache)
        except NotInstalled as exc:  # valid: what is missing is this machine's, not the file's
            needs += 1
            kind = "run config"
            print(f"note: {exc}", file=sys.stderr)
        except EvalkitError as exc:
            bad += 1
            print(f"{exc}", file=sys.stderr)
            continue
        kinds[kind] = kinds.get(kind, 0) + 1
    cache.save()
    said = ", ".join(plural(n, kind) for kind, n in sorted(kinds.items()))
    noted = f"; {needs} of them need what is not installed here to run (noted above)" if needs else ""
    print(f"{len(files) - bad} of {plural(len(files), 'file')} valid" + (f" ({said})" if said else "") + noted)
    return 1 if bad else 0
