"""The command line's fixed choices are the settings' own. Most are read from their source when the
parser is built (subcommands, report formats, executors, `list`, the gate's statistics); these few are
written out because their source module would load scipy (or pydantic) on the way to `--help`, so the
test holds them equal to the types the settings are checked against."""

from __future__ import annotations

import argparse
from typing import Any, get_args

import pytest

from evalkit.cli import build_parser
from evalkit.gate.config import Level, Metric, Pairing
from evalkit.stats.proportions import IntervalMethod
from evalkit.stats.registry import UNPAIRED


def _choices(command: str, dest: str) -> set[Any]:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    action = next(a for a in sub._actions if a.dest == dest)
    assert action.choices is not None
    return set(action.choices)


@pytest.mark.parametrize(
    ("command", "dest", "literal"),
    [
        ("gate", "metric", Metric),
        ("gate", "level", Level),
        ("gate", "pairing", Pairing),
        ("report", "interval", IntervalMethod),
    ],
)
def test_a_flags_choices_are_its_settings_values(command: str, dest: str, literal: Any) -> None:
    assert _choices(command, dest) == set(get_args(literal))


@pytest.mark.parametrize("command", ["gate", "plan"])
def test_the_unpaired_test_choices_are_the_registered_statistics(command: str) -> None:
    assert _choices(command, "test") == set(UNPAIRED.names)
