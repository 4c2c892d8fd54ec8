"""Importing a `module:Class` that a user named (a plugin strategy, a backend kind's class).

Modules that moved when the package was laid out in folders are still found under their old
paths, with a DeprecationWarning naming the new one, so configs and scenarios written before the
move keep working.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from evalkit.errors import ConfigError

__all__ = ["MOVED_MODULES", "current_module", "load_class"]

# old module path -> where it lives now (since the package was laid out in folders)
MOVED_MODULES: dict[str, str] = {
    "evalkit.yamlfile": "evalkit._yaml",
    "evalkit.stats_exact": "evalkit.stats.exact",
    "evalkit.sequential_rule": "evalkit.stats.stopping_rule",
    "evalkit.results_writer": "evalkit.results.writer",
    "evalkit.scan": "evalkit.results.summaries",
    "evalkit.integrity": "evalkit.results.integrity",
    "evalkit.merge": "evalkit.results.merge",
    "evalkit.shards": "evalkit.results.shards",
    "evalkit.outputlock": "evalkit.results.lock",
    "evalkit.portable": "evalkit.results.portable",
    "evalkit.secrets": "evalkit.results.secrets",
    "evalkit.serve": "evalkit.backends.serve",
    "evalkit.gbnf": "evalkit.strategies.gbnf",
    "evalkit.scenario": "evalkit.scenario.model",
    "evalkit.specs": "evalkit.scenario.argument_specs",
    "evalkit.matching": "evalkit.scenario.matching",
    "evalkit.mocks": "evalkit.scenario.mocks",
    "evalkit.statemocks": "evalkit.scenario.statemocks",
    "evalkit.checks": "evalkit.judge.verdict",
    "evalkit.callcheck": "evalkit.judge.calls",
    "evalkit.callmatch": "evalkit.judge.arguments",
    "evalkit.turncheck": "evalkit.judge.turns",
    "evalkit.degenerate": "evalkit.judge.degenerate",
    "evalkit.selfcheck": "evalkit.judge.reference_check",
    "evalkit.config": "evalkit.run.config",
    "evalkit.runner": "evalkit.run.runner",
    "evalkit.loop": "evalkit.run.loop",
    "evalkit.preflight": "evalkit.run.preflight",
    "evalkit.rescore": "evalkit.run.rescore",
    "evalkit.summary": "evalkit.report.summary",
    "evalkit.gate_config": "evalkit.gate.config",
    "evalkit.gate_match": "evalkit.gate.match",
    "evalkit.gate_render": "evalkit.gate.render",
    "evalkit.sequential": "evalkit.gate.sequential",
    "evalkit.executors": "evalkit.run.executors",
    "evalkit.executors.base": "evalkit.run.executors.base",
    "evalkit.executors.local": "evalkit.run.executors.local",
    "evalkit.executors.ray_executor": "evalkit.run.executors.ray_executor",
}


def current_module(module_name: str) -> str:
    """`module_name`, or where it moved to (with a DeprecationWarning)."""
    moved = MOVED_MODULES.get(module_name)
    if moved is None:
        return module_name
    warnings.warn(f"{module_name} moved to {moved}; name the new path", DeprecationWarning, stacklevel=3)
    return moved


def load_class(target: str) -> type[Any]:
    """Import `module:Class`, with an error that says what was wrong."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"plugin {target!r}: expected 'module:Class'")
    try:
        module = importlib.import_module(current_module(module_name))
    except ImportError as exc:
        raise ConfigError(f"plugin {target!r}: cannot import {module_name!r}: {exc}") from exc
    try:
        cls: type[Any] = getattr(module, attr)
    except AttributeError as exc:
        raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}") from exc
    return cls
