"""The command line: a thin layer over the Python API, one module per subcommand.

Each subcommand module has `add_parser(subparsers)` and `run(args) -> int`. `main` is the only
place that turns exceptions into exit codes:

    0  success (for `gate`: no regression)
    1  the check failed (`gate` found a regression; `validate` found a broken file)
    2  unusable input (bad config, scenario, results file, gate inputs)
    3  a backend or server could not be used
    130  interrupted (a resumable results file is left behind)
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from collections.abc import Sequence

from evalkit.errors import BackendError, EvalkitError, GateInputError, ReplayMiss

__all__ = ["main"]

# subcommand modules under evalkit.cli, in the order `--help` lists them
COMMANDS = ("run", "report", "gate", "validate", "rescore", "list", "serve", "import")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit", description="Measure tool-calling reliability of LLM agents and their guards."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"evalkit.cli.{name.replace('-', '_')}_cmd")
        module.add_parser(sub)
    return parser


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, (BackendError, ReplayMiss)):
        return 3
    if isinstance(exc, (GateInputError, EvalkitError)):
        return 2
    return 1


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # unwind like Ctrl-C: footers are written and started servers stopped


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if threading.current_thread() is threading.main_thread():  # signal handlers live there only
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        code: int = args.handler(args)
        return code
    except KeyboardInterrupt:
        print("evalkit: interrupted", file=sys.stderr)
        return 130
    except EvalkitError as exc:
        print(f"evalkit: error: {exc}", file=sys.stderr)
        return exit_code_for(exc)
