"""Importing a `module:Class` that a user named (a plugin guard), with a one-line error that says
which part was wrong. The import runs the module's code: only `evalkit run` (and a `rescore` the user
allowed) calls this; `evalkit validate` looks plugins up without importing them
(`evalkit.strategies.plugins.check_plugin`)."""

from __future__ import annotations

import importlib
from typing import Any

from evalkit.errors import ConfigError

__all__ = ["load_class", "split_target"]


def split_target(target: str) -> tuple[str, str]:
    """(module, class name) of `module:Class`, or a ConfigError that says what the form is."""
    module_name, _, attr = target.partition(":")
    if not all(part.isidentifier() for part in module_name.split(".")) or not attr.isidentifier():
        raise ConfigError(f"plugin {target!r}: expected 'module:Class' (a dotted module name, a colon, a class name)")
    return module_name, attr


def load_class(target: str) -> Any:
    """Import `module:Class` and return what the name is bound to (the caller checks it is the class
    it wants). Whatever the module raises at import, `sys.exit` too, is one line naming it."""
    module_name, attr = split_target(target)
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:
        first = (str(exc).splitlines() or [""])[0][:200]
        raise ConfigError(f"plugin {target!r}: cannot import {module_name!r}: {type(exc).__name__}: {first}") from exc
    if not hasattr(module, attr):
        raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}")
    return getattr(module, attr)
