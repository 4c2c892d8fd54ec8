"""Tests that need one of evalkit's optional extras skip, on a plain dev install
(`pip install -e '.[dev]'`), with the extra's name and the command that installs it:

    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))   # at a module's top, or in a test
    scenarios = shipped_scenarios()    # the shipped scenarios this install can load; skip_left_out()

(`pytest.importorskip` at a module's top is what ruff allows before the module's other imports.)
`test_every_extra_is_named_as_pyproject_declares_it` keeps the names here those of pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from evalkit.scenario.model import Scenario

__all__ = ["declared_extras", "extra_of", "needs_extra", "shipped_scenarios", "skip_left_out"]

ROOT = Path(__file__).resolve().parent.parent


def _extras() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    return extras


def declared_extras() -> set[str]:
    """The extras pyproject.toml declares."""
    return set(_extras())


def extra_of(module: str) -> str | None:
    """The extra whose distribution provides the top-level module (`bfcl_eval`: `bfcl`), if any."""
    for extra, requirements in _extras().items():
        names = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].replace("-", "_") for r in requirements}
        if module.split(".")[0] in names:
            return extra
    return None


def needs_extra(extra: str) -> str:
    """The reason a test skips without `extra`: its name and how to install it."""
    if extra not in declared_extras():
        raise ValueError(f"pyproject.toml declares no extra {extra!r}")
    return f"needs the {extra} extra: pip install -e '.[{extra}]'"


def _missing_state_module(path: Path) -> str | None:
    """The module of a stateful mock class the scenario names that this install cannot import."""
    doc: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in (doc or {}).get("state") or []:
        module = str(entry.get("class", "")).partition(":")[0]
        if module and importlib.util.find_spec(module.split(".")[0]) is None:
            return module
    return None


def shipped_scenarios() -> tuple[list[Scenario], dict[str, int]]:
    """Every scenario under scenarios/ that this install can load, and how many were left out per
    extra: a BFCL multi-turn case's stateful mocks are classes of bfcl_eval (the `bfcl` extra)."""
    from evalkit.scenario.model import load_scenarios

    loadable: list[Path] = []
    left_out: dict[str, int] = {}
    for path in sorted((ROOT / "scenarios").rglob("*.yaml")):
        module = _missing_state_module(path)
        if module is None:
            loadable.append(path)
        else:
            extra = extra_of(module) or module
            left_out[extra] = left_out.get(extra, 0) + 1
    return load_scenarios(loadable), left_out


def skip_left_out(left_out: dict[str, int]) -> None:
    """After a test has checked the scenarios it could load: a skip that names what it could not."""
    if left_out:
        said = "; ".join(f"{n} scenario(s) ({needs_extra(extra)})" for extra, n in sorted(left_out.items()))
        pytest.skip(f"checked the others; left out {said}")
