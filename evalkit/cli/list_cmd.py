"""`evalkit list [scenarios|strategies|backends|profiles]`: what is available."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from evalkit.cli.options import PATH, add_allow_state_module

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("what", nargs="?", default="all", choices=["all", *LISTINGS])
    p.add_argument(
        "--scenarios-dir",
        type=PATH,
        default=Path("scenarios"),
        help="folder searched for scenarios (default: scenarios)",
    )
    add_allow_state_module(p)
    p.set_defaults(handler=run)


def _strategy_line(name: str, cls: type) -> str:
    """A guard's name, the first line of its docstring, and its YAML options (dataclass fields) with
    their defaults."""
    import dataclasses

    doc = (cls.__doc__ or "").strip().splitlines()
    if doc and doc[0].startswith(f"{cls.__name__}("):  # the signature dataclasses write, not a description
        doc = []
    if not doc:  # the built-in guards describe themselves in their module's docstring: "`name`: what it does"
        doc = (sys.modules[cls.__module__].__doc__ or "").strip().splitlines()[:1]
        doc = [line.removeprefix(f"`{name}`: ").removeprefix(f"`{name}`") for line in doc]
    options = []
    for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            options.append(f"{f.name}={_short(f.default)}")
        elif f.default_factory is not dataclasses.MISSING:
            options.append(f"{f.name}={_short(f.default_factory())}")
        else:
            options.append(f.name)
    text = f"  {name:18} {doc[0] if doc else cls.__name__}"
    return text + (f"\n  {'':18} options: {', '.join(options)}" if options else "")


def _short(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _scenarios(args: argparse.Namespace) -> None:
    from evalkit.scenario.model import load_scenarios  # not at start-up: `list --help` needs no pydantic

    if not args.scenarios_dir.is_dir():
        return
    print("scenarios:")
    scenarios = load_scenarios(sorted(args.scenarios_dir.rglob("*.yaml")), args.allow_state_module)
    id_width = max((len(s.id) for s in scenarios), default=0)  # BFCL ids run long: columns stay aligned
    family_width = max((len(s.family) for s in scenarios), default=0)
    for s in scenarios:
        print(f"  {s.id:{id_width}}  {s.family:{family_width}}  {s.description}")


def _strategies(args: argparse.Namespace) -> None:
    from evalkit.strategies import STRATEGIES

    print("strategies (name, what it does, options with their defaults):")
    for name, guard in STRATEGIES.items():
        print(_strategy_line(name, guard))


def _backends(args: argparse.Namespace) -> None:
    from evalkit.backends import BACKENDS

    print("backends (kind, module, how it is reached):")
    for kind, cls in BACKENDS.items():
        reached = "HTTP" if cls.speaks_http else "no server"
        key = f"; key from ${cls.key_env} at its default url" if cls.key_env else ""
        print(f"  {kind:14} {cls.__module__:30} ({reached}{key})")


def _profiles(args: argparse.Namespace) -> None:
    from evalkit.backends.sim_profile import PROFILE_DIR

    names = [p.stem for p in sorted(PROFILE_DIR.glob("*.yaml"))]
    names += [f"fitted/{p.stem}" for p in sorted(PROFILE_DIR.glob("fitted/*.yaml"))]  # measured: `evalkit sim fit`
    print("simulated profiles:\n" + "\n".join(f"  {n}" for n in names))


# what `list` can show, in the order `list all` shows it
LISTINGS: dict[str, Callable[[argparse.Namespace], None]] = {
    "scenarios": _scenarios,
    "strategies": _strategies,
    "backends": _backends,
    "profiles": _profiles,
}


def run(args: argparse.Namespace) -> int:
    for name, show in LISTINGS.items():
        if args.what in ("all", name):
            show(args)
    return 0
