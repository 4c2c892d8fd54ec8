"""`evalkit sim fit RESULTS... --model NAME -o PROFILE.yaml` and `evalkit sim check PROFILE RESULTS...
[--report FILE.html]`."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from evalkit.backends.sim_profile import load_profile
from evalkit.cli.options import PATH, SIMULATIONS
from evalkit.errors import ConfigError
from evalkit.results.output_file import check_output, write_output
from evalkit.scenario.model import Scenario, load_scenarios
from evalkit.simfit.check import CheckResult, check
from evalkit.simfit.classify import classify_files
from evalkit.simfit.fit import fit_profile

__all__ = ["add_arguments", "format_check", "profile_yaml", "run"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    verbs = p.add_subparsers(dest="verb", required=True)
    fit = verbs.add_parser("fit", help="fit a profile to one model's recorded calls")
    fit.add_argument("results", nargs="+", type=PATH)
    fit.add_argument("--model", required=True, help="the model name in the results' cells")
    fit.add_argument("-o", "--output", type=PATH, required=True)
    chk = verbs.add_parser("check", help="simulate the real cells with a fitted profile and compare")
    chk.add_argument("profile", type=PATH)
    chk.add_argument("results", nargs="+", type=PATH)
    chk.add_argument("--draws", type=SIMULATIONS, default=20, help="posterior draws of the profile (default 20)")
    chk.add_argument("--runs", type=SIMULATIONS, default=10, help="simulated runs per cell and draw (default 10)")
    chk.add_argument(
        "--report",
        type=PATH,
        metavar="FILE.html",
        help="also write the calibration plot (predicted against observed, per cell, with intervals) as HTML",
    )
    for q in (fit, chk):
        q.add_argument("--scenarios", nargs="+", type=PATH, default=[Path("scenarios")])
    p.set_defaults(handler=run)


def _scenarios(paths: list[Path]) -> list[Scenario]:
    return load_scenarios([f for p in paths for f in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])])


def profile_yaml(results: list[Path], model: str, scenarios: list[Scenario]) -> str:
    """The fitted profile as the YAML `sim fit` writes (no machine path in it: files by name)."""
    found = classify_files(results, model, scenarios)
    if not found.observations:
        raise ConfigError(f"no recorded real call of model {model!r} in {', '.join(p.name for p in results)}")
    profile = fit_profile(found)
    return yaml.safe_dump(profile.model_dump(exclude_none=True), sort_keys=False, width=110)


def format_check(result: CheckResult) -> list[str]:
    cells = result.cells
    inside = sum(c.inside for c in cells)
    lines = [
        f"cells inside the simulation's 95% prediction interval: {inside} of {len(cells)} ({result.share_inside:.0%})"
    ]
    for c in cells:
        if not c.inside:
            lines.append(
                f"  outside: {c.source}: {c.mode}/{c.stack}/{c.scenario}: real {c.correct}/{c.n}, "
                f"predicted {c.predicted:.2f} [{c.low:.2f}, {c.high:.2f}]"
            )
    if result.stacks:
        lines.append("leave-one-stack-out (fitted without the stack; error = observed - predicted, 95% interval):")
    for s in result.stacks:
        lines.append(
            f"  {s.stack}: observed {s.observed:.2f} (n={s.n}), predicted {s.predicted:.2f} "
            f"[{s.low:.2f}, {s.high:.2f}], error {s.error:+.2f} [{s.observed - s.high:+.2f}, {s.observed - s.low:+.2f}]"
        )
    return lines


def run(args: argparse.Namespace) -> int:
    if args.verb == "fit":
        check_output(args.output, option="-o")  # before the fit: a path that cannot take the profile costs nothing
        text = profile_yaml(args.results, args.model, _scenarios(args.scenarios))
        print(f"wrote {write_output(args.output, text, option='-o')}")
        return 0
    if args.report is not None:
        check_output(args.report, option="--report")
    scenarios = _scenarios(args.scenarios)
    profile = load_profile(str(args.profile))
    if profile.fitted is None:
        raise ConfigError(f"{args.profile}: not a fitted profile (no `fitted:`); fit one with `evalkit sim fit`")
    found = classify_files(args.results, profile.fitted.model, scenarios)
    result = check(profile, found, scenarios, draws=args.draws, runs=args.runs)
    print(f"{profile.label()}; checked against {', '.join(p.name for p in args.results)}")
    if found.unknown or found.skipped:
        print(f"left out: {found.unknown} runs of scenarios not found, {found.skipped} runs not replayable")
    print("\n".join(format_check(result)))
    if args.report is not None:
        from evalkit.report.calibration import render_calibration  # matplotlib: only when a page is asked for

        page = render_calibration(result, profile.label(), [p.name for p in args.results])
        print(f"wrote {write_output(args.report, page, option='--report')}")
    return 0
