"""Importing a `module:Class` that a user named (a plugin strategy, a backend kind's class), with a
one-line error that says which part was wrong."""

from __future__ import annotations

import importlib
from typing import Any

from evalkit.errors import ConfigError

__all__ = ["load_class"]


def load_class(target: str) -> type[Any]:
    """Import `module:Class`, with an error that says what was wrong."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"plugin {target!r}: expected 'module:Class'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"plugin {target!r}: cannot import {module_name!r}: {exc}") from exc
    try:
        cls: type[Any] = getattr(module, attr)
    except AttributeError as exc:
        raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}") from exc
    return cls
