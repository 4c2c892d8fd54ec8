"""One list of built-in guards, read from the classes (`evalkit.strategies.STRATEGIES`): a guard's
`name` is said once, in its class. A guard class left out of the list fails the collection of this
module; two classes with one name fail `registry()` when `evalkit.strategies` is imported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

import evalkit.strategies
from evalkit.strategies import STRATEGIES, build_stack, registry
from evalkit.strategies.base import BaseStrategy
from evalkit.strategies.forge import forge_unavailable
from tests.registry_check import declared, unregistered

# BaseStrategy names itself "base" so that a plugin class built on it has a name; it is no guard
_UNREGISTERED = unregistered(evalkit.strategies, "name", STRATEGIES, ignore=(BaseStrategy,))
if _UNREGISTERED:
    raise ImportError(f"guard classes not in evalkit.strategies.STRATEGIES: {', '.join(_UNREGISTERED)}")


def test_every_guard_is_registered_under_its_own_name() -> None:
    assert _UNREGISTERED == []
    assert set(declared(evalkit.strategies, "name")) - {"base"} == set(STRATEGIES)
    assert all(cls.name == name for name, cls in STRATEGIES.items())
    # each builds from its name alone (forge where its Python and package are: tests/strategies/test_forge.py)
    names = [name for name in STRATEGIES if name != "forge" or forge_unavailable() is None]
    assert [type(s).name for s in build_stack([(name, {}) for name in names])] == names


@dataclass
class _Nudge(BaseStrategy):
    name: ClassVar[str] = "retry_nudge"


def test_a_repeated_name_is_refused() -> None:
    with pytest.raises(TypeError, match="strategy name 'retry_nudge' is given by RetryNudge and _Nudge"):
        registry([*STRATEGIES.values(), _Nudge])
