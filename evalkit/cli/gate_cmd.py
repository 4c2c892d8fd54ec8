"""`evalkit gate --baseline A.jsonl --candidate B.jsonl`: fail CI when the candidate regressed.

Exit 0: no cell regressed; 1: a cell regressed or fell under its floor; 2: the inputs cannot be
compared (raised as GateInputError and mapped by `evalkit.cli.main`); 4: a cell was not judged
(missing on one side, partial, infra errors above the limit in it) and `--allow-unjudged` was not
given. Every exit writes the `--junit` and `--markdown` files asked for (on exit 2 with the
reason; an output path that cannot be used is found before anything is read); `--markdown` appends,
since a CI step summary is shared by several steps. A usage error (an unknown option, a value out of
its range, `--alpha 0`) is argparse's, exit 2 before any file is known. Options given on the command
line override the `--config` file.
"""

from __future__ import annotations

import argparse

from evalkit.cli.options import ALPHA, FUTILITY, MARGIN, PATH, RUNS, SHARE
from evalkit.stats.registry import UNPAIRED, Statistics

__all__ = ["add_arguments", "run"]


def add_arguments(p: argparse.ArgumentParser, statistics: Statistics = UNPAIRED) -> None:
    p.add_argument("--baseline", nargs="+", type=PATH, required=True, help="baseline results file(s)")
    p.add_argument(
        "--candidate",
        nargs="+",
        type=PATH,
        required=True,
        help="candidate results file(s); with --sequential, the candidate's run config",
    )
    p.add_argument(
        "--config",
        type=PATH,
        help="gate settings (YAML): each option below by its name (max_infra_error_rate, ...), and floors: per-cell "
        "floor rules; options given here override it",
    )
    p.add_argument("--alpha", type=ALPHA, help="family-wise significance level (default 0.05)")
    p.add_argument(
        "--metric",
        choices=["correct", "completed"],
        help="the rate gated: correct (the check passed, default) or completed (structural)",
    )
    p.add_argument(
        "--floor", type=SHARE, help="fail a cell whose rate is significantly under this (one-sided exact binomial test)"
    )
    p.add_argument("--max-infra-error-rate", type=SHARE, help="share of infra errors that makes a cell unusable")
    p.add_argument("--test", choices=statistics.names, help=f"unpaired test (default {statistics.default})")
    p.add_argument(
        "--pairing",
        choices=["auto", "paired", "unpaired"],
        help="auto: McNemar when runs pair by scenario, index and seed (default)",
    )
    p.add_argument(
        "--level",
        choices=["scenario", "family", "cell"],
        help="compare per scenario (default), or pooled per family or per strategy column",
    )
    p.add_argument(
        "--margin",
        type=MARGIN,
        help="a cell regresses only on evidence of a drop larger than this (e.g. 0.05 for 5 points; default 0)",
    )
    p.add_argument(
        "--require-evidence",
        action="store_true",
        default=None,
        help="exit 4 when a passed cell is not shown within the margin (not enough evidence)",
    )
    p.add_argument(
        "--stratified",
        action="store_true",
        default=None,
        help="add a Cochran–Mantel–Haenszel test over all cells (and per family) to the Holm family",
    )
    p.add_argument(
        "--match-model",
        action="store_true",
        default=None,
        help="match cells by model too (a model change makes its cells not judged instead of compared)",
    )
    p.add_argument(
        "--allow-unjudged",
        action="store_true",
        default=None,
        help="exit 0 even when cells could not be judged (they are still named); default: exit 4",
    )
    p.add_argument("--junit", help="write JUnit XML here (one test case per cell)")
    p.add_argument("--markdown", help="append a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list the cells that passed")
    seq = p.add_argument_group("sequential mode")
    seq.add_argument(
        "--sequential",
        action="store_true",
        help="run the candidate config in batches against --baseline; stop each cell once decided",
    )
    seq.add_argument("--max-runs", type=RUNS, help="runs per cell of the fixed-N verdict it curtails (default 50)")
    seq.add_argument("--batch", type=RUNS, help="runs per undecided cell per batch (default 5)")
    seq.add_argument(
        "--futility",
        type=FUTILITY,
        help="stop a cell as accepted when its chance of still failing, at the drop the fixed-N "
        "test catches with 80%%, is under this (default 0.1; the power it may cost)",
    )
    seq.add_argument("--out", type=PATH, help="folder for the batch results (default results/gate-<config>)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # the gate's statistics load only when it runs: `gate --help` stays quick
    from evalkit.cli.gate_run import run_gate

    return run_gate(args)
