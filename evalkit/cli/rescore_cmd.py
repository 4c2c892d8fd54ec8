"""`evalkit rescore RESULTS -o OUT`: re-judge every run from its stored model outputs.

A results file is data: the plugin guards its header names are imported only when the user names
them again (`--allow-plugin`, or `--config` with the run's config), as the stateful mock modules
its scenarios use are (`--allow-state-module`, or the config's `allow_state_modules`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.options import PATH, add_allow_state_module
from evalkit.results.output_file import check_output
from evalkit.run.config import load_config
from evalkit.run.preflight import check_output_path
from evalkit.run.rescore import rescore_results
from evalkit.scenario.model import load_scenarios
from evalkit.strategies import STRATEGIES

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", type=PATH)
    p.add_argument(
        "-o",
        "--output",
        type=PATH,
        required=True,
        help="where to write: RESULTS itself, a new file, or with --overwrite another results file",
    )
    p.add_argument("--overwrite", action="store_true", help="replace OUTPUT even if it holds other results")
    p.add_argument(
        "--scenarios",
        nargs="+",
        type=PATH,
        default=[Path("scenarios")],
        help="scenario files or folders, searched for *.yaml (default: scenarios/)",
    )
    p.add_argument(
        "--allow-plugin",
        action="append",
        default=[],
        metavar="MODULE[:CLASS]",
        help="import this plugin guard named in the results header (runs its code); repeatable",
    )
    add_allow_state_module(p)
    p.add_argument(
        "--config", type=PATH, help="the run's config: its plugin guards and allow_state_modules are allowed"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    plugins: list[str] = list(args.allow_plugin)
    state_modules: list[str] = list(args.allow_state_module)
    if args.config is not None:
        config = load_config(args.config)
        plugins += [n for specs in config.strategy_specs().values() for n, _ in specs if n not in STRATEGIES]
        state_modules += config.allow_state_modules
    check_output_path(args.output)  # never renamed over a directory or a device such as /dev/full
    in_place = args.output.exists() and args.results.exists() and args.output.samefile(args.results)
    # in place, every run of the file is kept, re-judged; another results file is replaced only when asked
    check_output(args.output, option="-o", replace_results=in_place or args.overwrite, overwrite_flag="--overwrite")
    files = [f for p in args.scenarios for f in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])]
    summary = rescore_results(args.results, args.output, load_scenarios(files, state_modules), plugins)
    print(f"{args.output}: {summary.rejudged} of {summary.runs} runs re-judged, {summary.changed} changed verdict")
    return 0
