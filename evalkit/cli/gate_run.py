"""What `evalkit gate` does once its arguments are parsed (`evalkit.cli.gate_cmd` holds its options)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from pydantic import ValidationError

from evalkit._model import first_problem
from evalkit.errors import EvalkitError, GateInputError, OutputError
from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig, load_gate_config
from evalkit.gate.render import error_junit, error_markdown, render_junit, render_markdown, render_text
from evalkit.results.integrity import load_checked, scenario_drift
from evalkit.results.output_file import check_output, check_output_folder, write_output
from evalkit.results.scan import rows_held

__all__ = ["run_gate"]

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


def _files(args: argparse.Namespace) -> list[tuple[str, str]]:
    return [
        (option, path) for option, path in (("--junit", args.junit), ("--markdown", args.markdown)) if path is not None
    ]


def _check_outputs(args: argparse.Namespace) -> None:
    """Every output path, before anything is read or computed (an unset `$GITHUB_STEP_SUMMARY` fails at
    once); the first unusable one is the input error, written into the files that can take it."""
    unusable: dict[str, OutputError] = {}
    for option, path in _files(args):
        try:
            check_output(path, option=option)
        except OutputError as exc:
            unusable[option] = exc
    if args.sequential and args.out is not None:
        try:
            check_output_folder(args.out, option="--out")
        except OutputError as exc:
            unusable["--out"] = exc
    if unusable:
        first = str(next(iter(unusable.values())))
        markdown, junit = error_markdown(first, sequential=args.sequential), error_junit(first)
        with contextlib.suppress(OutputError):  # the error below is the one exit 2 reports
            _write_outputs(args, markdown, junit, skip=set(unusable))
        raise next(iter(unusable.values()))


def _write_outputs(args: argparse.Namespace, markdown: str, junit: str, skip: set[str] | None = None) -> None:
    """Each file asked for (the JUnit XML even when the markdown cannot be written), then the first failure."""
    failures: list[OutputError] = []
    texts = {"--junit": junit, "--markdown": markdown}
    for option, path in _files(args):
        if option not in (skip or set()):
            try:
                write_output(path, texts[option], option=option, append=option == "--markdown")
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


def run_gate(args: argparse.Namespace) -> int:
    _check_outputs(args)
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
