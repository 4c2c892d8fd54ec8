"""`evalkit rescore RESULTS -o OUT`: re-judge every run from its stored model outputs."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.run.rescore import rescore_results
from evalkit.scenario.model import load_scenarios

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rescore", help="re-judge a results file's runs with the current checker and scenarios")
    p.add_argument("results", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="where to write (may be RESULTS itself)")
    p.add_argument(
        "--scenarios",
        nargs="+",
        type=Path,
        default=[Path("scenarios")],
        help="scenario files or folders, searched for *.yaml (default: scenarios/)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    files = [f for p in args.scenarios for f in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])]
    summary = rescore_results(args.results, args.output, load_scenarios(files))
    print(f"{args.output}: {summary.rejudged} of {summary.runs} runs re-judged, {summary.changed} changed verdict")
    return 0
