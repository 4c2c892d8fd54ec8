"""`evalkit gate --baseline A.jsonl --candidate B.jsonl`: fail CI when the candidate regressed.

Exit 0: no cell regressed; 1: a cell regressed or fell under its floor; 2: the inputs cannot be
compared (raised as GateInputError and mapped by `evalkit.cli.main`). Options given on the command
line override the `--config` file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError

from evalkit.errors import GateInputError
from evalkit.gate import GateConfig, compare, load_gate_config, render_junit, render_markdown, render_text
from evalkit.integrity import load_checked

__all__ = ["add_parser", "run"]

_OVERRIDES = ("alpha", "floor", "max_infra_error_rate", "test", "pairing", "level")
_SEQUENTIAL = ("p0", "p1", "batch", "max_runs")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("gate", help="compare a candidate's results with a baseline's; exit 1 on a regression")
    p.add_argument("--baseline", nargs="+", type=Path, help="baseline results file(s)")
    p.add_argument("--candidate", nargs="+", type=Path, required=True,
                   help="candidate results file(s); with --sequential, the candidate's run config")
    p.add_argument("--config", type=Path, help="gate settings (YAML): alpha, floor, floors, level, pairing, ...")
    p.add_argument("--alpha", type=float, help="family-wise significance level (default 0.05)")
    p.add_argument("--floor", type=float, help="fail a cell whose candidate lower Wilson bound is under this rate")
    p.add_argument("--max-infra-error-rate", type=float, help="share of infra errors that makes a cell unusable")
    p.add_argument("--test", choices=["boschloo", "fisher"], help="unpaired test (default boschloo)")
    p.add_argument("--pairing", choices=["auto", "paired", "unpaired"],
                   help="auto: McNemar when runs pair by scenario, index and seed (default)")
    p.add_argument("--level", choices=["scenario", "cell"],
                   help="compare per scenario, or pooled per cell (default: cell)")
    p.add_argument("--junit", type=Path, help="write JUnit XML here (one test case per cell)")
    p.add_argument("--markdown", type=Path, help="write a markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("-v", "--verbose", action="store_true", help="also list the cells that passed")
    seq = p.add_argument_group("sequential mode")
    seq.add_argument("--sequential", action="store_true", help="run the candidate config in batches; stop on an SPRT")
    seq.add_argument("--p0", type=float, help="SPRT: the acceptable completion rate (default 0.95)")
    seq.add_argument("--p1", type=float, help="SPRT: the regressed completion rate (default 0.80)")
    seq.add_argument("--batch", type=int, help="SPRT: runs per cell per batch (default 5)")
    seq.add_argument("--max-runs", type=int, help="SPRT: runs per cell before a truncated decision (default 50)")
    seq.add_argument("--out", type=Path, help="SPRT: folder for the batch results (default results/gate-<config>)")
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
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise GateInputError(f"gate option: {where + ': ' if where else ''}{first['msg']}") from exc


def _write(path: Path | None, text: str) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _sequential(args: argparse.Namespace, settings: GateConfig) -> int:
    from evalkit.config import load_config
    from evalkit.sequential import render_sequential, run_sequential

    if len(args.candidate) != 1:
        raise GateInputError("--sequential takes one candidate run config")
    config = load_config(args.candidate[0])
    result = run_sequential(config, args.out or Path("results") / f"gate-{config.name}", settings.sequential,
                            max_infra_error_rate=settings.max_infra_error_rate)
    text = render_sequential(result)
    print(text)
    _write(args.markdown, "```\n" + text + "\n```\n")
    return 0 if result.passed else 1


def run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.sequential:
        return _sequential(args, settings)
    if not args.baseline:
        raise GateInputError("--baseline is required (unless --sequential)")
    result = compare(load_checked(args.baseline), load_checked(args.candidate), settings)
    print(render_text(result, verbose=args.verbose))
    _write(args.markdown, render_markdown(result))
    _write(args.junit, render_junit(result))
    return 0 if result.passed else 1
