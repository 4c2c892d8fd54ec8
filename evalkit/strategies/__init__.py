"""Guard strategies: a registry of names, and building a run's strategy stack from config specs.

A spec is a name (`retry_nudge`), a mapping of one name to its options (`{retry_nudge: {max_retries: 5}}`)
or a user's own guard (`{plugin: "mypkg.guards:MyGuard", options: {...}}`). Modules are imported
lazily so that listing strategies costs nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from evalkit._imports import load_class
from evalkit.chat import ExecutedCall
from evalkit.errors import ConfigError
from evalkit.strategies.base import Accept, BaseStrategy, Decision, Execute, Retry, Rewrite, Stop, Strategy, TurnView
from evalkit.strategies.plugins import check_plugin, load_plugin_class

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
]

# name -> "module:Class"
STRATEGIES: dict[str, str] = {
    "trust_text": "evalkit.strategies.trust_text:TrustText",
    "retry_nudge": "evalkit.strategies.retry_nudge:RetryNudge",
    "no_tools_guard": "evalkit.strategies.no_tools_guard:NoToolsGuard",
    "respond_tool": "evalkit.strategies.respond_tool:RespondTool",
    "grammar": "evalkit.strategies.grammar:Grammar",
    "rescue_parse": "evalkit.strategies.rescue_parse:RescueParse",
    "tool_choice": "evalkit.strategies.tool_choice:ToolChoiceRequired",
    "context_mode": "evalkit.strategies.context_mode:ContextMode",
    "completion_guard": "evalkit.strategies.completion_guard:CompletionGuard",
    "forge": "evalkit.strategies.forge:ForgeGuardrails",  # Forge's own code: Python >= 3.12, forge-guardrails
}

StrategySpec = tuple[str, dict[str, Any]]  # (registry name or "module:Class", options)


def _target(name: str) -> str:
    target = STRATEGIES.get(name, name if ":" in name else "")
    if not target:
        known = ", ".join(sorted(STRATEGIES))
        raise ConfigError(f"unknown strategy {name!r} (known: {known}; or a plugin 'module:Class')")
    return target


def _build_one(name: str, options: dict[str, Any]) -> Strategy:
    target = _target(name)
    cls = load_class(target) if name in STRATEGIES else load_plugin_class(target)
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else None
    unknown = sorted(set(options) - fields) if fields is not None else []
    if unknown:
        raise ConfigError(f"strategy {name!r}: unknown option(s) {unknown}; it takes {sorted(fields or [])}")
    try:
        instance = cls(**options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"strategy {name!r}: {exc}") from exc
    if not isinstance(instance, Strategy):
        raise ConfigError(f"strategy {name!r}: {target} does not implement the Strategy protocol")
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
            check_plugin(_target(name))


def guard_provenance(specs: list[StrategySpec]) -> dict[str, dict[str, Any]]:
    """What the built-in guards among `specs` that wrap someone else's code run (their `provenance()`:
    the `forge` strategy's forge-guardrails version and wheel hash), by name, for the results header."""
    found: dict[str, dict[str, Any]] = {}
    for name, _ in specs:
        provenance = getattr(load_class(STRATEGIES[name]), "provenance", None) if name in STRATEGIES else None
        if provenance is not None and name not in found:
            found[name] = provenance()
    return found
