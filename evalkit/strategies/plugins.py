"""A user's own guard, named in a config as `{plugin: "module:Class"}`: found, checked, then loaded.

The trust model: a config is code you chose to run, like a `conftest.py`. `evalkit run` imports a
plugin's module, which runs whatever that module does at import. `evalkit validate` must not: it
finds the module's file without importing it (nor its parent packages) and reads its source with
`ast` to see that the name is a class. Only at run time is the class imported, and it is accepted
only if it is a class with the `Strategy` protocol's members; a function (`os:system`) never is.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from evalkit._imports import load_class, split_target
from evalkit.errors import ConfigError

__all__ = ["check_plugin", "load_plugin_class", "plugin_allowed"]

_PROTOCOL_METHODS = ("requires", "prepare", "judge")
MAX_SOURCE_BYTES = 10 * 1024 * 1024  # a plugin module's source that `validate` will read


def _find_spec(target: str, module_name: str) -> importlib.machinery.ModuleSpec:
    """The module's spec, found level by level so that no parent package's `__init__` runs."""
    parts = module_name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name is only looked up, never imported
    except (ImportError, ValueError) as exc:
        raise ConfigError(f"plugin {target!r}: cannot look up {parts[0]!r}: {exc}") from exc
    for depth in range(1, len(parts)):
        if spec is None or spec.submodule_search_locations is None:
            break
        name = ".".join(parts[: depth + 1])
        spec = (
            sys.modules[name].__spec__
            if name in sys.modules
            else importlib.machinery.PathFinder.find_spec(name, list(spec.submodule_search_locations))
        )
    if spec is None or spec.name != module_name:
        raise ConfigError(f"plugin {target!r}: no module {module_name!r} on the Python path (PYTHONPATH)")
    return spec


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import, including those inside top-level if/try/with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list):
                yield from _top_level(inner)
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _top_level(handler.body)


def _binds(stmt: ast.stmt, attr: str) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any(a.name == "*" or (a.asname or a.name.split(".")[0]) == attr for a in stmt.names)
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    return any(isinstance(n, ast.Name) and n.id == attr for t in targets for n in ast.walk(t))


def _check_source(target: str, source: str, attr: str) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise ConfigError(f"plugin {target!r}: the module does not parse: {exc}") from exc
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.ClassDef) and stmt.name == attr:
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == attr:
            raise ConfigError(f"plugin {target!r}: {attr!r} is a function; a plugin must be a Strategy class")
        if _binds(stmt, attr):
            return  # bound some other way (an import, an assignment): the class is checked at run time
    raise ConfigError(f"plugin {target!r}: module {target.partition(':')[0]!r} has no {attr!r}")  # in its source


def _check_source_size(target: str, filename: str) -> None:
    """`validate` reads a module's source into memory: a huge (say, sparse) file must not fill it.
    (FIFOs and links to devices are never found: the import system takes only regular files.)"""
    try:
        size = os.stat(filename).st_size
    except OSError as exc:
        raise ConfigError(f"plugin {target!r}: cannot read the module's source: {exc}") from exc
    if size > MAX_SOURCE_BYTES:
        raise ConfigError(f"plugin {target!r}: the module's source is {size} bytes (the limit is {MAX_SOURCE_BYTES})")


def check_plugin(target: str) -> None:
    """Check, without running any of its code, that `module:Class` names a class that can be loaded."""
    module_name, attr = split_target(target)
    spec = _find_spec(target, module_name)
    module = sys.modules.get(module_name)  # already imported: looking at it runs nothing
    if module is None and spec.origin in ("built-in", "frozen"):
        module = importlib.import_module(module_name)  # part of the interpreter itself: runs no user code
    if module is not None:
        # what the name is bound to, not what the source says: `os:system` comes from `from posix import *`
        if not hasattr(module, attr):
            raise ConfigError(f"plugin {target!r}: module {module_name!r} has no {attr!r}")
        check_strategy_class(target, getattr(module, attr))
        return
    source = None
    loader = spec.loader
    if isinstance(loader, importlib.machinery.SourceFileLoader):
        _check_source_size(target, loader.get_filename(module_name))
        try:
            source = loader.get_source(module_name)
        except (ImportError, OSError) as exc:
            raise ConfigError(f"plugin {target!r}: cannot read the module's source: {exc}") from exc
    if source is not None:
        _check_source(target, source, attr)
    # a compiled extension or a namespace package has no source to read: it is checked when the run imports it


def check_strategy_class(target: str, cls: Any) -> type[Any]:
    """`cls` if it is a class with the Strategy protocol's members, else a ConfigError."""
    if not isinstance(cls, type):
        attr = target.partition(":")[2]
        what = "a function" if callable(cls) else f"a {type(cls).__name__}, not a class"
        raise ConfigError(f"plugin {target!r}: {attr!r} is {what}; a plugin must be a Strategy class")
    missing = [m for m in _PROTOCOL_METHODS if not callable(getattr(cls, m, None))]
    if missing or not isinstance(getattr(cls, "name", None), str):
        lacking = ", ".join(missing + ([] if isinstance(getattr(cls, "name", None), str) else ["name"]))
        raise ConfigError(
            f"plugin {target!r}: does not implement the Strategy protocol (lacks {lacking}); "
            "subclass evalkit.strategies.BaseStrategy"
        )
    return cls


def load_plugin_class(target: str) -> type[Any]:
    """Import `module:Class` (running the module: only under `evalkit run`) and check it is a Strategy class."""
    return check_strategy_class(target, load_class(target))


def plugin_allowed(target: str, allowed: Iterable[str]) -> bool:
    """Whether `module:Class` was opted into: named itself, or its module, or a package above it."""
    module = target.partition(":")[0]
    return any(target == a or module == a or module.startswith(a + ".") for a in allowed)
