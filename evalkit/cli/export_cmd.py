"""`evalkit export inspect RESULTS... -o DIR`: evalkit's runs as inspect_ai logs, for `inspect view`."""

from __future__ import annotations

import argparse

from evalkit.cli.options import PATH
from evalkit.report.inspect_log import export_inspect
from evalkit.results.output_file import check_output_folder

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    formats = p.add_subparsers(dest="format", required=True)
    inspect = formats.add_parser(
        "inspect", help="one inspect_ai log per column, one sample per run (needs the inspect extra)"
    )
    inspect.add_argument("results", nargs="+", type=PATH, help="results files (shards merge)")
    inspect.add_argument("-o", "--output", type=PATH, required=True, metavar="DIR", help="folder for the .eval logs")
    inspect.add_argument(
        "--overwrite",
        action="store_true",
        help="replace logs of the same names in DIR (never a link or a results file)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_output_folder(args.output, option="-o")  # before any reading: a bad -o fails at once
    export = export_inspect(args.results, args.output, overwrite=args.overwrite)
    simulated = " (SIMULATED results)" if export.simulated else ""
    print(f"wrote {len(export.logs)} inspect logs{simulated} to {args.output}: inspect view --log-dir {args.output}")
    return 0
