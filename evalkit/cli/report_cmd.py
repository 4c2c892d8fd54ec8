"""`evalkit report RESULTS... -o reports/NAME.html`: statistics, plots and transcripts from results files."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.cli.options import ALPHA, PATH, SEED, TRANSCRIPTS
from evalkit.errors import ResultsError

if TYPE_CHECKING:
    from evalkit.results.runs import Results, RunRow

__all__ = ["add_arguments", "run"]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,100}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=PATH, help="results files (shards are merged)")
    p.add_argument(
        "-o",
        "--out",
        type=PATH,
        help="output file, replaced if it exists (default: reports/<config name> + suffix, "
        "refused if that file exists; '-' for stdout)",
    )
    from evalkit.report import FORMATS  # the package alone: its renderers load when one is used

    p.add_argument("--format", choices=sorted(FORMATS), default="html", help="report format (default: html)")
    p.add_argument("--title", help="report title (default: from the config names)")
    p.add_argument(
        "--interval",
        choices=["wilson", "clopper-pearson"],
        default="wilson",
        help="interval for rates (default: wilson)",
    )
    p.add_argument("--alpha", type=ALPHA, default=0.05, help="significance level for comparisons (default: 0.05)")
    p.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default: 0)")
    p.add_argument(
        "--published",
        type=PATH,
        metavar="FILE",
        help="a YAML table of published numbers to show beside the measured ones (e.g. configs/adr013-published.yaml)",
    )
    p.add_argument(
        "--transcripts", type=TRANSCRIPTS, default=3, metavar="N", help="failed transcripts shown per cell (default: 3)"
    )
    p.set_defaults(handler=run)


def _default_out(results: Results[RunRow], fmt: str) -> Path:
    """reports/<config name>.<suffix>, unless a report is already there: replacing one (perhaps a
    committed report, or one made from other results) takes an explicit -o. The name comes from the
    results file, which is data: one that is not a plain file name (`../x`, `/tmp/x`) takes -o too."""
    from evalkit.report import FORMATS

    name = results.headers[0].config_name
    if not _PLAIN_NAME.fullmatch(name):
        raise ResultsError(f"the results' config name {name[:60]!r} is not a plain file name: pass -o FILE")
    out = Path("reports") / f"{name}{FORMATS[fmt].suffix}"
    if out.exists():
        raise ResultsError(f"{out} exists: pass -o {out} to replace it, or -o another path")
    return out


def run(args: argparse.Namespace) -> int:
    from evalkit.results.integrity import load_checked
    from evalkit.results.output_file import check_output
    from evalkit.results.scan import rows_held

    stdout = args.out is not None and str(args.out) == "-"
    if args.out is not None and not stdout:
        check_output(args.out, option="report")  # before the files are read: a bad path costs nothing
    results = load_checked(args.results, transcripts=args.transcripts)
    out = None if stdout else args.out or _default_out(results, args.format)
    with rows_held():
        return _report(args, results, out)


def _report(args: argparse.Namespace, results: Results[RunRow], out: Path | None) -> int:
    """Build the report and write it to `out` (None: stdout)."""
    from evalkit.report import render, write_report  # scipy, matplotlib: not for --help
    from evalkit.report.data import build_report, results_time

    data = build_report(
        results,
        title=args.title,
        interval_method=args.interval,
        alpha=args.alpha,
        seed=args.seed,
        max_failed_transcripts=args.transcripts,
        generated_at=results_time(results),
        root=str(Path.cwd()),
    )
    if args.published is not None:
        from evalkit.report.published import with_published

        data = with_published(data, args.published)
    if any(run.cell.scenario.startswith("bfcl-") for run in results.runs):
        from evalkit.importers.bfcl.score import with_bfcl_score  # bfcl_eval loads only when a run is judged

        data = with_bfcl_score(data, results)
    if out is None:
        print(render(data, args.format), end="")
        return 0
    write_report(data, out, args.format)
    print(f"wrote {out}{data.simulated_suffix}")
    return 0
