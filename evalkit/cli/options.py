"""Options several subcommands share, defined once so that their names and help stay the same."""

from __future__ import annotations

import argparse

__all__ = ["add_allow_state_module"]


def add_allow_state_module(p: argparse.ArgumentParser) -> None:
    """`--allow-state-module MODULE`: the explicit opt-in a scenario's stateful mock module needs."""
    p.add_argument(
        "--allow-state-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="let scenarios build stateful mocks from MODULE (imports it: runs its code); repeatable",
    )
