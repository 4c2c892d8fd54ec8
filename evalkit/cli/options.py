"""Options several subcommands share, defined once so that their names, help and ranges stay the same.

Every numeric option takes one of the range types below as its argparse `type=`: argparse calls it
while it parses, so a value out of range (`plan --alpha 0`, `sim check --draws 0`, `--alpha nan`) is
a one-line usage error with exit 2 before anything is read or computed. A range is stated once,
here; the gate's settings file is checked by the same bounds in `evalkit.gate.config.GateConfig`
(tests/cli/test_option_ranges.py holds the two equal).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ALPHA",
    "CONTEXT",
    "DROP",
    "FUTILITY",
    "HOST",
    "MARGIN",
    "PATH",
    "PORT",
    "RUNS",
    "SAMPLE",
    "SECONDS",
    "SEED",
    "SERVER_SEED",
    "SHARE",
    "SIMULATIONS",
    "SLOTS",
    "TRANSCRIPTS",
    "Range",
    "add_allow_state_module",
]


@dataclass(frozen=True)
class Range:
    """An argparse `type=`: a number of `kind` within the bounds (None: unbounded on that side)."""

    kind: type[int] | type[float]
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def describe(self) -> str:
        low = f"({_num(self.gt)}" if self.gt is not None else f"[{_num(self.ge)}" if self.ge is not None else "(-inf"
        high = f"{_num(self.lt)})" if self.lt is not None else f"{_num(self.le)}]" if self.le is not None else "inf)"
        if self.kind is int and self.lt is None and self.le is None and self.ge is not None:
            return f"a whole number of at least {_num(self.ge)}"
        return f"{'a whole number' if self.kind is int else 'a number'} in {low}, {high}"

    def holds(self, value: float) -> bool:
        return (
            math.isfinite(value)
            and (self.gt is None or value > self.gt)
            and (self.ge is None or value >= self.ge)
            and (self.lt is None or value < self.lt)
            and (self.le is None or value <= self.le)
        )

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.describe()}") from None
        if not self.holds(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.describe()}")
        return value


def _num(value: float | None) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


ALPHA = Range(float, gt=0, lt=1)  # a significance level α
DROP = Range(float, gt=0, lt=1)  # a drop of a rate to catch
MARGIN = Range(float, ge=0, lt=1)  # the gate's margin (0: any significant drop)
SHARE = Range(float, ge=0, le=1)  # a rate: a floor, a share of infra errors
FUTILITY = Range(float, ge=0, lt=1)  # the power `gate --sequential` may give up
# Counts have a ceiling a machine can do: `--draws 2147483648` asked numpy for an array it refused
RUNS = Range(int, ge=1, le=100_000)  # runs per cell (a run config's own limit), a gate's batch or N
SIMULATIONS = Range(int, ge=1, le=100_000)  # posterior draws, simulated experiments, simulated runs
SAMPLE = Range(int, ge=1)  # cases to take (more than there are: all)
SLOTS = Range(int, ge=1, le=1024)  # workers, server slots, threads
CONTEXT = Range(int, ge=1, le=1 << 24)  # a model's context, in tokens
TRANSCRIPTS = Range(int, ge=0, le=1000)  # failed transcripts shown per cell (0: none)
SEED = Range(int, ge=0, lt=1 << 63)  # an RNG seed (numpy takes no negative one)
SERVER_SEED = Range(int, ge=0, lt=1 << 32)  # llama-server's seed is 32 bits
SECONDS = Range(float, gt=0, le=86_400)  # a timeout
PORT = Range(int, ge=0, le=65535)  # a TCP port (0: any free one)


_NAME_MAX = 255  # bytes in one file name (Linux, macOS): a longer one fails every file call with ENAMETOOLONG


def _path(text: str) -> Path:
    """An argparse type for every path option: never empty (`-o "$UNSET"` passes "", which `Path` would
    take for "." and write into the current folder), no file name past the system's limit."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (an unset environment variable?)")
    if any(len(part.encode(errors="surrogateescape")) > _NAME_MAX for part in Path(text).parts):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}...: a file name longer than {_NAME_MAX} bytes")
    return Path(text)


PATH = _path


def _host(text: str) -> str:
    """An argparse type for a listening address: never empty, which asyncio takes for every interface
    (an unset environment variable would open a server to the network); say 0.0.0.0 to mean that."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty address (an unset environment variable?): say 0.0.0.0 for every interface"
        )
    return text


HOST = _host


def add_allow_state_module(p: argparse.ArgumentParser) -> None:
    """`--allow-state-module MODULE`: the explicit opt-in a scenario's stateful mock module needs."""
    p.add_argument(
        "--allow-state-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="let scenarios build stateful mocks from MODULE (imports it: runs its code); repeatable",
    )
