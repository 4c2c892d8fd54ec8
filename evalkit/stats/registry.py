"""The statistics a user chooses among for the gate's unpaired cells without a margin (`gate --test`,
`test:` in a gate config, `plan --test`), by name. This is the one place the choice is written: the
command line's choices, the config's validation and the docs' table (held by
`tests/stats/test_registry.py`) are read from `UNPAIRED`.

An entry names the module attribute that is its test: a `evalkit.stats.gate_tests.GateTest`, which
holds the statistic's p-value, interval, rejection region and exact power, and so its plan
(`evalkit.gate.plan` plans for the test `select` picks). This module imports neither numpy nor scipy,
so `--help` shows the choices without them; a test is imported when a cell is judged. A new
statistic is its module, one line in `UNPAIRED`, and its tests.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

__all__ = ["UNPAIRED", "Statistic", "Statistics", "UnpairedTest"]


class UnpairedTest(Protocol):
    """What the registry reads of a statistic's test (a `evalkit.stats.gate_tests.GateTest`, which
    `select` checks it is): its name, and every table's p-value (`gate --sequential` reads them)."""

    @property
    def kind(self) -> str: ...

    def grid(self, n_base: int, n_cand: int) -> np.ndarray: ...


@dataclass(frozen=True)
class Statistic:
    name: str  # as a user chooses it, and as a verdict's `kind` names it
    test: str  # "module:attribute" of its GateTest
    docs: str  # as the docs' table of the gate's tests names it

    def load(self) -> UnpairedTest:
        module, _, attribute = self.test.partition(":")
        test: UnpairedTest = getattr(importlib.import_module(module), attribute)
        # a registry line pointing at another statistic's test would judge under the wrong name
        if test.kind != self.name:
            raise ValueError(f"{self.test} is the test {test.kind!r}, registered as {self.name!r}")
        return test


class Statistics:
    """Registered statistics by name; the first is the default."""

    def __init__(self, *entries: Statistic) -> None:
        self.entries = {e.name: e for e in entries}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    @property
    def default(self) -> str:
        return self.names[0]

    def registered(self, entry: Statistic) -> Statistics:
        """These statistics and one more (a copy: a test's registry leaves `UNPAIRED` as it is)."""
        return Statistics(*self.entries.values(), entry)

    def test(self, name: str) -> UnpairedTest:
        if name not in self.entries:
            raise ValueError(f"no statistic {name!r} (registered: {', '.join(self.names)})")
        return self.entries[name].load()

    def expected(self) -> str:
        """The names as a validation error lists them: 'a', 'b' or 'c'."""
        quoted = [repr(name) for name in self.names]
        return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"

    def docs_cell(self) -> str:
        """The docs' table cell of the unpaired tests without a margin."""
        shown = [e.docs + (" (default)" if e.name == self.default else "") for e in self.entries.values()]
        return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


UNPAIRED = Statistics(
    Statistic("boschloo", "evalkit.stats.gate_tests:BOSCHLOO", "Boschloo"),
    Statistic("fisher", "evalkit.stats.gate_tests:FISHER", "Fisher"),
)
