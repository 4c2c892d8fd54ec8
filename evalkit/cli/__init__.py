"""The command line: a thin layer over the Python API, one module per subcommand.

Each subcommand module has `add_arguments(parser)` and `run(args) -> int`; its name and help line
are listed once, in `COMMANDS`. `main` is the only
place that turns exceptions into exit codes:

    0  success (for `gate`: no regression; also `--help` and `--version`)
    1  the check failed (`gate` found a regression; `validate` found a broken file)
    2  unusable input (a usage error such as an option out of its range, a bad config, scenario, results
       file or gate input, an output file that cannot be written or that holds results not to be replaced)
    3  a backend or server could not be used (`run`: also when more of a backend's runs than the config's
       `max_infra_error_rate` were infra errors, TooManyInfraErrors)
    4  `gate`: a cell could not be judged (missing, partial, infra errors above the limit in it)
    130  interrupted (a resumable results file is left behind)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TextIO

from evalkit._version import __version__
from evalkit.errors import BackendError, EvalkitError, GateInputError, OutputError, ReplayMiss

__all__ = ["main"]

# subcommands, in the order `--help` lists them, with their one-line help: the module
# evalkit.cli.NAME_cmd adds the arguments, imported only when its command is the one named
COMMANDS = {
    "run": "run a config's matrix and write a JSONL results file",
    "merge": "merge the shards of one run (run --shard i/n) into one results file",
    "report": "write an HTML (or markdown, JSON) report from results files",
    "gate": "compare a candidate's results with a baseline's; exit 1 on a regression",
    "plan": "runs per cell a gate needs to catch a drop, and their cost",
    "validate": "check scenario or config files (folders are searched for *.yaml)",
    "rescore": "re-judge a results file's runs with the current checker and scenarios",
    "list": "list scenarios, strategies, backends or simulated profiles",
    "serve": "start a local model server: llama-server or the simulated model (until Ctrl-C)",
    "import": "convert public benchmark cases into scenario files",
    "sim": "fit a simulated profile to a real model's results, and check its predictions",
    "export": "write results in another tool's format: inspect_ai's logs, for `inspect view`",
}


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand argv names, if any: its first argument that is not an option."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error in one line (its usage block would bury the problem):
    `evalkit plan: error: argument --alpha: '0' is not a number in (0, 1)`, exit 2. Subcommands'
    parsers are of the same class (argparse makes them with the parent's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser(command: str | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """The parser. Only `command`'s module is imported (all of them with `full`): the others are
    their help line only, so `evalkit --help` and `evalkit validate` never import what
    `report` or `gate` need (scipy, matplotlib: seconds of start-up)."""
    parser = _Parser(prog="evalkit", description="Measure tool-calling reliability of LLM agents and their guards.")
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_line in COMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if full or name == command:
            importlib.import_module(f"evalkit.cli.{name}_cmd").add_arguments(p)
    return parser


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, (BackendError, ReplayMiss)):
        return 3
    if isinstance(exc, (GateInputError, OutputError, EvalkitError)):
        return 2
    return 1


class _Visible:
    """A command's stdout: whatever it prints (ids, names, model output from files that are data) shows
    its control characters escaped, so no ESC sequence or carriage return rewrites the terminal."""

    def __init__(self, stream: TextIO, escape: Callable[[str], str]) -> None:
        self._stream, self._escape = stream, escape

    def write(self, text: str) -> int:
        return self._stream.write(self._escape(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # unwind like Ctrl-C: footers are written and started servers stopped


# loggers whose records speak for a command of their own rather than as `evalkit: LEVEL:`
_SPEAKERS = {"evalkit.serve_sim": "evalkit serve sim"}  # evalkit/backends/sim_limits.py's `log`


class _Said(logging.Formatter):
    """The library's log records in the CLI's words: `evalkit: warning: MESSAGE`, or `evalkit serve sim:
    MESSAGE` from the simulated server; a logged exception's traceback follows on its own lines."""

    def format(self, record: logging.LogRecord) -> str:
        speaker = _SPEAKERS.get(record.name, f"evalkit: {record.levelname.lower()}")
        return f"{speaker}: {super().format(record)}"


@contextlib.contextmanager
def _process_settings() -> Iterator[None]:
    """What a command changes in the process, put back when it ends (an in-process caller, a test,
    keeps its own): SIGTERM unwinds like Ctrl-C, and the `evalkit` logger writes to standard error.
    Only the CLI installs that handler, so a library user's logging configuration decides otherwise."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Said())
    logger = logging.getLogger("evalkit")
    logger.addHandler(handler)
    previous = None
    if threading.current_thread() is threading.main_thread():  # signal handlers live there only
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        if previous is not None:  # None: a handler not set from Python, which cannot be set back
            signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if any("\x00" in word for word in argv):  # no shell can pass one; a caller in Python can, and no path holds one
        print("evalkit: error: an argument holds a NUL byte", file=sys.stderr)
        return 2
    parser = build_parser(_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, a usage error: argparse has said what it had to
        return exc.code if isinstance(exc.code, int) else 0
    with _process_settings():
        return _handle(args)


def _handle(args: argparse.Namespace) -> int:
    """Run the command `args` names; its exceptions become exit codes and one-line messages."""
    from evalkit.results.escaping import one_line, terminal_text  # regular expressions: no start-up cost

    stdout = sys.stdout
    sys.stdout = _Visible(stdout, terminal_text)
    try:
        code: int = args.handler(args)
        sys.stdout.flush()  # here, where a closed pipe is caught below, not at exit
        return code
    except KeyboardInterrupt as exc:  # `run` says how far it got and how to go on
        text = f"evalkit: interrupted: {exc}" if str(exc) else "evalkit: interrupted"
        print(terminal_text(text), file=sys.stderr)
        return 130
    except EvalkitError as exc:
        # one line, names in it escaped; a server that could not start also shows its log's last lines
        shown = terminal_text if isinstance(exc, BackendError) else one_line
        print(shown(f"evalkit: error: {exc}"), file=sys.stderr)
        return exit_code_for(exc)
    except BrokenPipeError:  # `evalkit list | head`: the reader has what it wanted; no traceback
        # Python's documented recipe: point stdout at devnull so the flush at exit cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return 0
    finally:
        sys.stdout = stdout
