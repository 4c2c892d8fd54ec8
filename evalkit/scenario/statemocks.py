"""Stateful mocks: Python classes (`module:Class`) whose public methods are the scenario's tools.

One set of instances lives for one run, so results depend on earlier calls (a file `mv`'d is gone).
A check with `state_as_reference` compares the instances' public attributes after a turn with the
state the reference calls reach, as BFCL's multi-turn checker does (`state_checker`). Only a class
that passed the allowlist when its scenario was loaded (`state_allowlist.py`) is ever imported.
"""

from __future__ import annotations

import copy
import importlib
import json
from typing import Any

from evalkit.errors import ScenarioError
from evalkit.scenario.model import CallCheck, Scenario, StatefulClass

__all__ = ["StatefulMocks"]


def _build(spec: StatefulClass, source: str, field: str) -> Any:
    if not spec.allowed:  # built without the allowlist check (`model_construct`): never imported
        raise ScenarioError(source, f"{spec.cls!r} was not checked against the state-class allowlist", field=field)
    module_name, _, class_name = spec.cls.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (Exception, SystemExit) as exc:  # whatever an allowed module raises at import: one line
        raise ScenarioError(source, f"cannot import {spec.cls} ({_first_line(exc)})", field=field) from exc
    if not isinstance(cls, type):
        what = "a function" if callable(cls) else f"a {type(cls).__name__}"
        raise ScenarioError(source, f"{spec.cls!r} is {what}, not a class", field=field)
    try:
        instance = cls()
        if hasattr(instance, "_load_scenario"):  # an empty config too: BFCL's backends set their defaults there
            instance._load_scenario(copy.deepcopy(spec.config), **spec.options)
    except Exception as exc:  # the class cannot be built as a mock: the scenario is unusable
        raise ScenarioError(source, f"cannot build {spec.cls} ({_first_line(exc)})", field=field) from exc
    return instance


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"


class StatefulMocks:
    """The run's instances; `call` runs a tool on them, `snapshot` reads their public state."""

    def __init__(self, scenario: Scenario) -> None:
        self.instances = {
            spec.cls: _build(spec, scenario.source, f"state.{i}.class") for i, spec in enumerate(scenario.state)
        }

    def method(self, name: str) -> Any:
        if name.startswith("_"):
            return None
        for instance in self.instances.values():
            found = getattr(instance, name, None)
            if callable(found):
                return found
        return None

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
        """(result, error) of the tool call; a mock's exception is an error the model reads."""
        method = self.method(name)
        if method is None:
            return None, f"no tool {name!r}"
        try:
            # a copy: a backend may keep or grow what it is given, and the arguments belong to the scenario
            result = method(**copy.deepcopy(arguments))
        except Exception as exc:  # the mock rejected the call: the model sees why, as from a real tool
            return None, f"{type(exc).__name__}: {exc}"
        return json.loads(json.dumps(result, default=str)), None

    def differences(self, other: StatefulMocks) -> list[str]:
        """`class.attribute` names whose public values differ from `other`'s (Python equality, as BFCL)."""
        out = []
        for name, mine in self.instances.items():
            theirs = other.instances[name]
            out += [
                f"{name.rpartition(':')[2]}.{attr}"
                for attr in vars(theirs)
                if not attr.startswith("_") and getattr(mine, attr, None) != getattr(theirs, attr)
            ]
        return out

    def replay(self, calls: list[CallCheck]) -> list[tuple[Any, str | None]]:
        """Run `calls` in order; their (result, error) pairs."""
        return [self.call(call.name, call.arguments) for call in calls]
