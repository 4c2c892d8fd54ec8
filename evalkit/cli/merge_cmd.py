"""`evalkit merge A.jsonl B.jsonl … -o ALL.jsonl`: join the shards of one run into one results file."""

from __future__ import annotations

import argparse

from evalkit.cli.options import PATH

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
    print(f"merged {len(report.inputs)} files{shards} into {report.output}: {report.runs} runs")
    if report.superseded:
        print(f"{report.superseded} infra_error records are superseded by a real record of the same run")
    if report.missing:
        shown = ", ".join(report.missing[:_SHOW_MISSING])
        more = f" and {len(report.missing) - _SHOW_MISSING} more" if len(report.missing) > _SHOW_MISSING else ""
        print(f"{len(report.missing)} runs of the plan are missing: {shown}{more}")
        print(f"(run them with: evalkit run CONFIG --resume -o {report.output})")
    return 0
