"""Guard strategies: the registry of names, read from the classes, and building a run's strategy
stack from config specs.

A spec is a name (`retry_nudge`), a mapping of one name to its options (`{retry_nudge: {max_retries: 5}}`)
or a user's own guard (`{plugin: "mypkg.guards:MyGuard", options: {...}}`). A built-in guard is one
module with one class whose `name` is its registry name, and one line in `STRATEGIES` below; the
guard modules are small (all of them import in about 5 ms), so the registry imports them all.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from evalkit._imports import load_class
from evalkit.chat import ExecutedCall
from evalkit.errors import ConfigError
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, Retry, Rewrite, Stop, Strategy, TurnView
from evalkit.strategies.completion_guard import CompletionGuard
from evalkit.strategies.context_mode import ContextMode
from evalkit.strategies.forge import ForgeGuardrails
from evalkit.strategies.grammar import Grammar
from evalkit.strategies.no_tools_guard import NoToolsGuard
from evalkit.strategies.plugins import check_plugin, load_plugin_class
from evalkit.strategies.rescue_parse import RescueParse
from evalkit.strategies.respond_tool import RespondTool
from evalkit.strategies.retry_nudge import RetryNudge
from evalkit.strategies.tool_choice import ToolChoiceRequired
from evalkit.strategies.trust_text import TrustText

__all__ = [
    "STRATEGIES",
    "Accept",
    "BaseStrategy",
    "Decision",
    "Execute",
    "ExecutedCall",
    "Retry",
    "Rewrite",
    "Stop",
    "Strategy",
    "StrategySpec",
    "TurnView",
    "build_stack",
    "check_specs",
    "guard_provenance",
    "load_class",
    "registry",
]


def registry(classes: list[type[Strategy]]) -> dict[str, type[Strategy]]:
    """name -> class; two classes with one name are an error here, when the package is imported."""
    found: dict[str, type[Strategy]] = {}
    for cls in classes:
        if cls.name in found:
            raise TypeError(f"strategy name {cls.name!r} is given by {found[cls.name].__name__} and {cls.__name__}")
        found[cls.name] = cls
    return found


# One line per built-in guard, in the order `evalkit list strategies` shows them.
STRATEGIES: dict[str, type[Strategy]] = registry(
    [
        TrustText,
        RetryNudge,
        NoToolsGuard,
        RespondTool,
        Grammar,
        RescueParse,
        ToolChoiceRequired,
        ContextMode,
        CompletionGuard,
        ForgeGuardrails,  # Forge's own code: imported when a run builds it (Python >= 3.12, forge-guardrails)
    ]
)

StrategySpec = tuple[str, dict[str, Any]]  # (registry name or "module:Class", options)


def _plugin_target(name: str) -> str:
    if ":" not in name:
        known = ", ".join(sorted(STRATEGIES))
        raise ConfigError(f"unknown strategy {name!r} (known: {known}; or a plugin 'module:Class')")
    return name


def _build_one(name: str, options: dict[str, Any]) -> Strategy:
    cls = STRATEGIES[name] if name in STRATEGIES else load_plugin_class(_plugin_target(name))
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else None
    unknown = sorted(set(options) - fields) if fields is not None else []
    if unknown:
        raise ConfigError(f"strategy {name!r}: unknown option(s) {unknown}; it takes {sorted(fields or [])}")
    try:
        instance = cls(**options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"strategy {name!r}: {exc}") from exc
    if not isinstance(instance, Strategy):
        raise ConfigError(f"strategy {name!r}: {name} does not implement the Strategy protocol")
    return instance


def build_stack(specs: list[StrategySpec]) -> list[Strategy]:
    """Fresh strategy instances for one run, in the order they were declared."""
    return [_build_one(name, dict(options)) for name, options in specs]


def check_specs(specs: list[StrategySpec], *, import_plugins: bool) -> None:
    """Check a stack's names and options. Built-in guards are built once; a plugin is only looked
    up (`check_plugin`, none of its code runs) unless `import_plugins`, as under `evalkit run`."""
    for name, options in specs:
        if name in STRATEGIES or import_plugins:
            _build_one(name, dict(options))
        else:
            check_plugin(_plugin_target(name))


def guard_provenance(specs: list[StrategySpec]) -> dict[str, dict[str, Any]]:
    """What the built-in guards among `specs` that wrap someone else's code run (their `provenance()`:
    the `forge` strategy's forge-guardrails version and wheel hash), by name, for the results header."""
    found: dict[str, dict[str, Any]] = {}
    for name, _ in specs:
        provenance = getattr(STRATEGIES[name], "provenance", None) if name in STRATEGIES else None
        if provenance is not None and name not in found:
            found[name] = provenance()
    return found
