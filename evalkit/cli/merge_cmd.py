"""`evalkit merge A.jsonl B.jsonl … -o ALL.jsonl`: join the shards of one run into one results file."""

from __future__ import annotations

import argparse

from evalkit.cli.options import PATH
from evalkit.results.escaping import plural

__all__ = ["add_arguments", "run"]

_SHOW_MISSING = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=PATH, help="results files of one config and evalkit version")
    p.add_argument("-o", "--out", type=PATH, required=True, help="the merged results file (must not exist)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.results.merge import merge_results  # the results stage: not needed for --help
    from evalkit.results.output_file import check_output

    check_output(args.out, option="-o")
    report = merge_results(args.results, args.out)
    shards = f" (shards {', '.join(report.shards)})" if report.shards else ""
    print(f"merged {plural(len(report.inputs), 'file')}{shards} into {report.output}: {plural(report.runs, 'run')}")
    if report.superseded:
        held = "record is" if report.superseded == 1 else "records are"
        print(f"{report.superseded} infra_error {held} superseded by a real record of the same run")
    if report.missing_count:
        shown = ", ".join(report.missing[:_SHOW_MISSING])
        more = report.missing_count - min(_SHOW_MISSING, len(report.missing))
        are = "is" if report.missing_count == 1 else "are"
        print(
            f"{plural(report.missing_count, 'run')} of the plan {are} missing: {shown}"
            + (f" and {more} more" if more else "")
        )
        print(f"(run them with: evalkit run CONFIG --resume -o {report.output})")
    return 0
