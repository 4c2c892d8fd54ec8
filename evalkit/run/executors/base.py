"""The executor seam: where a phase's runs execute, apart from who writes their records.

The runner (the *driver*) plans the runs, works out what a resume still needs, holds the results
file and writes every header, record and footer. An executor only runs: `phase()` opens the
backends of some config entries wherever it runs them and yields a `Phase`, whose `run()` hands
back each finished run's record. So resume, the file lock and the integrity rules stay with the
driver whatever the executor is.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evalkit.backends.entry import BackendEntry
    from evalkit.results.records import RunRecord
    from evalkit.run.config import RunConfig
    from evalkit.run.matrix import PlannedRun

__all__ = ["Executor", "Phase"]


class Phase(Protocol):
    """Backends opened for a phase: whether any is simulated, their provenance, and the runs."""

    @property
    def simulated(self) -> bool: ...  # final once describe() has run

    async def describe(self) -> dict[str, dict[str, Any]]: ...

    def run(self, pending: Mapping[str, Iterator[PlannedRun]]) -> AsyncGenerator[RunRecord, None]:
        """Records of the pending runs (a lazy plan per backend label) in the order they finish."""
        ...


class Executor(Protocol):
    def phase(
        self, config: RunConfig, entries: list[BackendEntry], record_dir: Path | None
    ) -> AbstractAsyncContextManager[Phase]: ...
