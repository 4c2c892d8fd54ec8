"""`evalkit validate PATH...`: check scenario and config files without running anything.

A file is a config if its top level has `backends` or `strategies`, whatever folder it is in. A
config gets the same checks as `evalkit run` does before it starts (`preflight`), except that a
plugin guard is only looked up, never imported: nothing from a config executes here. A scenario's
stateful mock classes must be BFCL's or from a module named with `--allow-state-module` (or in the
config's `allow_state_modules`); only those are imported, to run the reference through them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit._yaml import read_yaml
from evalkit.cli.options import PATH, add_allow_state_module
from evalkit.errors import ConfigError, EvalkitError
from evalkit.judge.reference_check import reference_problems
from evalkit.run.config import load_config
from evalkit.run.preflight import preflight
from evalkit.scenario.model import load_scenario

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


_CONFIG_KEYS = frozenset({"backends", "strategies"})  # a scenario has neither


def _is_config(path: Path) -> bool:
    return bool(_CONFIG_KEYS & set(read_yaml(path).data))


def run(args: argparse.Namespace) -> int:
    files = _files(args.paths)
    allowed: list[str] = args.allow_state_module
    seen: dict[str, Path] = {}
    bad = 0
    for path in files:
        try:
            if _is_config(path):
                preflight(load_config(path).allowing_state_modules(allowed), import_plugins=False)
            else:
                scenario = load_scenario(path, allowed)
                if scenario.id in seen:
                    first = seen[scenario.id]
                    raise EvalkitError(f"{path}: id: duplicate scenario id {scenario.id!r} (also in {first})")
                seen[scenario.id] = path
                problems = reference_problems(scenario)  # the reference, through its own mocks and check
                if problems:
                    raise EvalkitError(f"{path}: " + "; ".join(problems))
        except EvalkitError as exc:
            bad += 1
            print(f"{exc}", file=sys.stderr)
    print(f"{len(files) - bad} of {len(files)} files valid")
    return 1 if bad else 0
