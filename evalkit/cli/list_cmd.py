"""`evalkit list [scenarios|strategies|backends|profiles]`: what is available."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.backends import BACKENDS
from evalkit.backends.sim_profile import PROFILE_DIR
from evalkit.scenario.model import load_scenarios
from evalkit.strategies import STRATEGIES

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="list scenarios, strategies, backends or simulated profiles")
    p.add_argument("what", nargs="?", default="all", choices=["all", "scenarios", "strategies", "backends", "profiles"])
    p.add_argument("--scenarios-dir", type=Path, default=Path("scenarios"))
    p.add_argument(
        "--allow-state-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="let scenarios build stateful mocks from MODULE (imports it: runs its code); repeatable",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.what in ("all", "scenarios") and args.scenarios_dir.is_dir():
        print("scenarios:")
        for s in load_scenarios(sorted(args.scenarios_dir.rglob("*.yaml")), args.allow_state_module):
            print(f"  {s.id:28} {s.family:22} {s.description}")
    if args.what in ("all", "strategies"):
        print("strategies:\n" + "\n".join(f"  {name:18} {target}" for name, target in STRATEGIES.items()))
    if args.what in ("all", "backends"):
        print("backends:\n" + "\n".join(f"  {name:18} {target}" for name, target in BACKENDS.items()))
    if args.what in ("all", "profiles"):
        names = [p.stem for p in sorted(PROFILE_DIR.glob("*.yaml"))]
        names += [f"fitted/{p.stem}" for p in sorted(PROFILE_DIR.glob("fitted/*.yaml"))]  # measured: `evalkit sim fit`
        print("simulated profiles:\n" + "\n".join(f"  {n}" for n in names))
    return 0
