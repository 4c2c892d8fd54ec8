"""The check behind each registry test: every class that names itself in a package (a backend's
`kind`, a guard's `name`) is in the package's registry. The registry tests run it at import, so a
class left out fails their collection, not one test among many."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Mapping
from types import ModuleType
from typing import Any

__all__ = ["declared", "unregistered"]


def declared(package: ModuleType, attribute: str) -> dict[str, type[Any]]:
    """Every class in the package's modules that gives `attribute` a string in its own body, by that
    string (a class that inherits it, or sets it per instance like the backend wrappers, names nothing)."""
    found: dict[str, type[Any]] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and isinstance(vars(cls).get(attribute), str):
                found[vars(cls)[attribute]] = cls
    return found


def unregistered(
    package: ModuleType, attribute: str, registered: Mapping[str, Any], ignore: tuple[type, ...] = ()
) -> list[str]:
    """The classes `declared` finds that the registry does not hold under their name."""
    return sorted(
        f"{cls.__module__}.{cls.__qualname__} ({attribute} {name!r})"
        for name, cls in declared(package, attribute).items()
        if registered.get(name) is not cls and cls not in ignore
    )
