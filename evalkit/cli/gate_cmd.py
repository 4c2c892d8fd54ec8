"""`evalkit gate --baseline A.jsonl --candidate B.jsonl`: fail CI when the candidate regressed.

Exit 0: no cell regressed; 1: a cell regressed or fell under its floor; 2: the inputs cannot be
compared (raised as GateInputError and mapped by `evalkit.cli.main`); 4: a cell was not judged
(missing on one side, partial, infra errors above the limit in it) and `--allow-unjudged` was not
given. Every exit writes the `--junit` and `--markdown` files asked for (on exit 2 with the
reason); `--markdown` appends, since a CI step summary is shared by several steps. Options given on
the command line override the `--config` file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from evalkit._model import first_problem
from evalkit.errors import EvalkitError, GateInputError, OutputError
from evalkit.gate.config import GateConfig, load_gate_config
from evalkit.gate.render import error_junit, error_markdown, render_junit, render_markdown, render_text
from evalkit.gate.verdict import compare
from evalkit.results.integrity import load_checked, scenario_drift
from evalkit.results.output_file import write_output
from evalkit.results.summaries import rows_held

__all__ = ["add_parser", "run"]

_OVERRIDES = (
    "alpha",
    "metric",
    "floor",
    "max_infra_error_rate",
    "test",
    "pairing",
    "level",
    "allow_unjudged",
    "margin",
    "require_evidence",
)
_SEQUENTIAL = ("futility", "batch", "max_runs")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gate", help="compare a candidate's results with a baseline's; exit 1 on a regression")
    p.add_argument("--baseline", nargs="+", type=Path, required=True, help="baseline results file(s)")
    p.add_argument(
        "--candidate",
        nargs="+",
        type=Path,
        required=True,
        help="candidate results file(s); with --sequential, the candidate's run config",
    )
    p.add_argument("--config", type=Path, help="gate settings (YAML): alpha, floor, floors, level, pairing, ...")
    p.add_argument("--alpha", type=float, help="family-wise significance level (default 0.05)")
    p.add_argument(
        "--metric",
        choices=["correct", "completed"],
        help="the rate gated: correct (the check passed, default) or completed (structural)",
    )
    p.add_argument(
        "--floor", type=float, help="fail a cell whose rate is significantly under this (one-sided exact binomial test)"
    )
    p.add_argument("--max-infra-error-rate", type=float, help="share of infra errors that makes a cell unusable")
    p.add_argument("--test", choices=["boschloo", "fisher"], help="unpaired test (default boschloo)")
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
        type=float,
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
    seq.add_argument("--max-runs", type=int, help="runs per cell of the fixed-N verdict it curtails (default 50)")
    seq.add_argument("--batch", type=int, help="runs per undecided cell per batch (default 5)")
    seq.add_argument(
        "--futility",
        type=float,
        help="stop a cell as accepted when its chance of still failing, at the drop the fixed-N "
        "test catches with 80%%, is under this (default 0.1; the power it may cost)",
    )
    seq.add_argument("--out", type=Path, help="folder for the batch results (default results/gate-<config>)")
    p.set_defaults(handler=run)


def _settings(args: argparse.Namespace) -> GateConfig:
    config = load_gate_config(args.config) if args.config else GateConfig()
    update = {k: getattr(args, k) for k in _OVERRIDES if getattr(args, k) is not None}
    sequential = {k: getattr(args, k) for k in _SEQUENTIAL if getattr(args, k) is not None}
    if sequential:  # a dict, so that the options are validated (model_copy would not check them)
        update["sequential"] = config.sequential.model_dump() | sequential
    try:
        return GateConfig.model_validate(config.model_dump() | update)
    except ValidationError as exc:
        problem = first_problem(exc)
        where = f"{problem.field}: " if problem.loc else ""
        raise GateInputError(f"gate option: {where}{problem.message}") from exc


def _write_outputs(args: argparse.Namespace, markdown: str, junit: str) -> None:
    """Each file asked for (the JUnit XML even when the markdown cannot be written), then the first failure."""
    failures: list[OutputError] = []
    for option, path, text in (("--junit", args.junit, junit), ("--markdown", args.markdown, markdown)):
        if path is not None:
            try:
                write_output(path, text, option=option, append=option == "--markdown")
            except OutputError as exc:
                failures.append(exc)
    if failures:
        raise failures[0]


def _sequential(args: argparse.Namespace, settings: GateConfig) -> int:
    from evalkit.gate.render import render_sequential, sequential_junit, sequential_markdown
    from evalkit.gate.sequential import run_sequential
    from evalkit.run.config import load_config

    if len(args.candidate) != 1:
        raise GateInputError("--sequential takes one candidate run config")
    if settings.margin > 0:  # its stopping rule is the exact test without a margin
        raise GateInputError("--sequential does not take --margin (its stopping rule tests any drop)")
    baseline = load_checked(args.baseline, transcripts=0)
    config = load_config(args.candidate[0])
    result = run_sequential(config, baseline, args.out or Path("results") / f"gate-{config.name}", settings)
    print(render_sequential(result))
    _write_outputs(args, sequential_markdown(result), sequential_junit(result))
    return result.exit_code


def _fixed(args: argparse.Namespace, settings: GateConfig) -> int:
    baseline, candidate = load_checked(args.baseline, transcripts=0), load_checked(args.candidate, transcripts=0)
    drift = scenario_drift(baseline, candidate)
    if drift is not None:
        print(f"evalkit: warning: {drift.message}", file=sys.stderr)
    with rows_held():
        result = compare(baseline, candidate, settings)
    print(render_text(result, verbose=args.verbose))
    _write_outputs(args, render_markdown(result), render_junit(result))
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
        return _sequential(args, settings) if args.sequential else _fixed(args, settings)
    except OutputError:
        raise  # the files were already attempted
    except EvalkitError as exc:  # exit 2: say so in the files CI publishes, then let main map it
        try:
            _write_outputs(args, error_markdown(str(exc), sequential=args.sequential), error_junit(str(exc)))
        except OutputError as lost:
            print(f"evalkit: error: {lost}", file=sys.stderr)  # the input error below is what exit 2 reports
        raise
