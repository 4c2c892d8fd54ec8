"""Shards: a deterministic slice of a run plan, so several machines can split one matrix.

A run belongs to shard `i/n` when a stable hash of its run id falls in slot `i`. The run id names
the run (backend/mode/strategy/scenario/index), so the slice does not depend on the order of the
plan, on how many runs are already done, or on the machine: every shard of `n` together holds
each run exactly once. `evalkit merge` joins the shards' results files again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

from evalkit.errors import ConfigError, ResultsError

__all__ = ["Shard", "check_resume_shard", "parse_shard"]

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


class _HasRunId(Protocol):
    @property
    def run_id(self) -> str: ...


R = TypeVar("R", bound=_HasRunId)


def shard_slot(run_id: str, count: int) -> int:
    """The 0-based slot of `run_id` among `count` shards (sha256, so stable across Python runs)."""
    digest = hashlib.sha256(run_id.encode()).digest()
    # 64 bits: the modulo's bias towards low slots is below 2⁻⁴⁰ for any shard count a user gives
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count`, 1-based as written on the command line (`--shard 2/3`)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ConfigError(f"--shard {self.index}/{self.count}: the shard must be between 1 and {self.count}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, run_id: str) -> bool:
        return shard_slot(run_id, self.count) == self.index - 1

    def select(self, runs: Iterable[R]) -> Iterator[R]:
        """The runs of this shard, lazily and in the plan's order."""
        return (r for r in runs if self.holds(r.run_id))


def parse_shard(text: str) -> Shard:
    """`"2/3"` -> Shard(2, 3); anything else is a one-line `ConfigError`."""
    match = _SHARD.fullmatch(text)
    if match is None or int(match.group(2)) < 1:
        raise ConfigError(f"--shard {text!r}: expected I/N with 1 <= I <= N, e.g. 2/3")
    return Shard(int(match.group(1)), int(match.group(2)))


def check_resume_shard(output: object, file_shards: list[str | None], shard: Shard | None) -> None:
    """A resume continues the slice the file holds: the same `--shard`, or none for a merged file."""
    want = str(shard) if shard else None
    held = set(file_shards)
    if held == {want} or (want is None and len(held) > 1):  # several shards: a merge, resumable whole
        return
    named = ", ".join(sorted(s or "none" for s in held))
    raise ResultsError(f"{output} holds shard {named}; resume it with the same --shard")
