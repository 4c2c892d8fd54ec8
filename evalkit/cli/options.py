"""Options several subcommands share, defined once so that their names, help and ranges stay the same.

Every numeric option takes one of the range types below as its argparse `type=`: argparse calls it
while it parses, so a value out of range (`plan --alpha 0`, `sim check --draws 0`, `--alpha nan`) is
a one-line usage error with exit 2 before anything is read or computed. A range is stated once,
here; the gate's settings file is checked by the same bounds in `evalkit.gate.config.GateConfig`
(tests/cli/test_options.py holds the two equal).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

__all__ = [
    "ALPHA",
    "COUNT",
    "DROP",
    "FUTILITY",
    "MARGIN",
    "PORT",
    "POSITIVE",
    "SECONDS",
    "SEED",
    "SHARE",
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
    return f"{value:g}"


ALPHA = Range(float, gt=0, lt=1)  # a significance level α
DROP = Range(float, gt=0, lt=1)  # a drop of a rate to catch
MARGIN = Range(float, ge=0, lt=1)  # the gate's margin (0: any significant drop)
SHARE = Range(float, ge=0, le=1)  # a rate: a floor, a share of infra errors
FUTILITY = Range(float, ge=0, lt=1)  # the power `gate --sequential` may give up
POSITIVE = Range(int, ge=1)  # runs, draws, experiments, batches, workers, slots
COUNT = Range(int, ge=0)  # how many of something to show (0: none)
SEED = Range(int, ge=0)  # an RNG seed (numpy takes no negative one)
SECONDS = Range(float, gt=0)  # a timeout
PORT = Range(int, ge=0, le=65535)  # a TCP port (0: any free one)


def add_allow_state_module(p: argparse.ArgumentParser) -> None:
    """`--allow-state-module MODULE`: the explicit opt-in a scenario's stateful mock module needs."""
    p.add_argument(
        "--allow-state-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="let scenarios build stateful mocks from MODULE (imports it: runs its code); repeatable",
    )
