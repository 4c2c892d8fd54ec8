"""`evalkit plan BASELINE [--margin D] [--drop D ...] [--profile PROFILE]`: the runs per cell a gate
needs to catch a drop, and what they cost, from the baseline's own rates, model calls and wall time;
with a profile, also the power and the runs needed by simulation from it (`evalkit.gate.simplan`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evalkit.cli.options import ALPHA, DROP, MARGIN, PATH, SIMULATIONS
from evalkit.gate.plan import CellPlan, plan_cells
from evalkit.results.integrity import load_checked
from evalkit.results.records import Results

__all__ = ["add_arguments", "run"]

_PROFILE_HELP = (
    "also estimate, by simulation from this profile (a file or a packaged name such as fitted/smollm2), the "
    "power at the planned runs and the runs for 80%%: every experiment draws the profile from its fit's "
    "posterior and simulates every cell of the profile's model (cells correlated through the shared draw); "
    "the candidate fails each correct run with probability D/p, p the cell's mean simulated rate, so each "
    "cell's rate drops by D"
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("baseline", nargs="+", type=PATH, help="baseline results file(s)")
    p.add_argument("--drop", type=DROP, action="append", help="drop to catch (repeatable; default: the margin, or 0.1)")
    p.add_argument(
        "--margin", type=MARGIN, default=0.0, help="the gate's --margin: also the runs to show cells within it"
    )
    p.add_argument("--alpha", type=ALPHA, default=0.05, help="family-wise α (default 0.05)")
    p.add_argument("--profile", help=_PROFILE_HELP)
    p.add_argument(
        "--config",
        type=PATH,
        help="with --profile: the run config whose strategies, sampling and scenarios the cells use "
        "(default: the baseline header's strategies and sampling, scenarios by id from --scenarios)",
    )
    p.add_argument("--scenarios", nargs="+", type=PATH, default=[Path("scenarios")], help="with --profile")
    p.add_argument(
        "--experiments",
        type=SIMULATIONS,
        default=40,
        help="with --profile: simulated experiments (posterior draws; 40)",
    )
    p.add_argument(
        "--sim-runs", type=SIMULATIONS, default=20, help="with --profile: simulated runs per cell and draw (20)"
    )
    p.set_defaults(handler=run)


def _line(c: CellPlan) -> str:
    if c.runs is None:
        return f"  {c.name}: {c.base_x}/{c.base_n}: a drop of {c.drop:.0%} is below 0%"
    power = f"exact power {c.power:.2f}" if c.power is not None else "exact power not checked above 400"
    margin = f"; shown within the margin at about {c.margin_runs}" if c.margin_runs is not None else ""
    seq = f"; --sequential about {c.sequential_runs:.0f} with nothing changed" if c.sequential_runs is not None else ""
    return (
        f"  {c.name}: {c.base_x}/{c.base_n}: {c.runs} runs per side ({power}), "
        f"{c.runs * c.calls_per_run:.0f} model calls, {c.runs * c.seconds_per_run:.0f} s{margin}{seq}"
    )


def _simulated_rates(args: argparse.Namespace, baseline: Results) -> Any:
    """The baseline's cells simulated from the profile (once, for every --drop), with the stacks,
    sampling and scenarios of --config or of the baseline's header."""
    from evalkit.backends.sim_profile import load_profile
    from evalkit.gate.simplan import header_settings, simulate_rates
    from evalkit.run.config import load_config
    from evalkit.scenario.model import load_scenarios

    profile = load_profile(args.profile)  # a missing or broken profile: a ConfigError, exit 2
    if args.config is not None:
        config = load_config(args.config)
        scenarios = load_scenarios(config.scenario_paths(), config.allow_state_modules)
        settings: dict[str, Any] = {"strategies": config.strategies, "sampling": config.sampling.model_dump()}
    else:
        files = [f for p in args.scenarios for f in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])]
        scenarios = load_scenarios(files)
        settings = header_settings(baseline)
    by_id = {s.id: s for s in scenarios}
    return simulate_rates(baseline, profile, by_id, settings, experiments=args.experiments, sim_runs=args.sim_runs)


def run(args: argparse.Namespace) -> int:
    baseline = load_checked(args.baseline, transcripts=0)
    simulation = _simulated_rates(args, baseline) if args.profile else None
    for drop in args.drop or [args.margin or 0.1]:
        cells = plan_cells(baseline, drop, alpha=args.alpha, margin=args.margin)
        print(
            f"evalkit plan: runs per side to catch a drop of {drop:.0%} with 80% probability, "
            f"Boschloo at α/m = {args.alpha}/{len(cells)} (Holm's first step)"
        )
        simulated = _simulate(args, simulation, drop, cells) if simulation is not None else {}
        for c in cells:
            print(_line(c))
            if c.name in simulated:
                print(simulated[c.name])
        known = [c for c in cells if c.runs is not None]
        calls = sum(c.runs * c.calls_per_run for c in known if c.runs is not None)
        seconds = sum(c.runs * c.seconds_per_run for c in known if c.runs is not None)
        most = max((c.runs for c in known if c.runs is not None), default=0)
        print(
            f"matrix: {len(cells)} cells; up to {most} runs per cell; {calls:.0f} model calls and "
            f"{seconds / 3600:.1f} h of wall time (one side, at the baseline's averages)"
        )
        if "" in simulated:
            print(simulated[""])
    return 0


def _simulate(args: argparse.Namespace, simulation: Any, drop: float, cells: list[CellPlan]) -> dict[str, str]:
    """The lines the simulation adds: one per cell it simulated (by name), and the matrix's (key "")."""
    from evalkit.gate.simplan import simulate_plan

    planned = {c.name: c.runs for c in cells}
    found = simulate_plan(simulation, drop, planned, alpha=args.alpha)
    by = f"by simulation from {args.profile} (SIMULATED)"
    lines = {}
    for name, s in found.cells.items():
        if s.runs is None and s.power is None:
            what = f"a drop of {drop:.0%} is below 0%" if s.rate < drop else "80% not reached within 400 runs"
        else:
            at = f"power {s.power:.2f} at {planned[name]} runs; " if s.power is not None else ""
            needed = f"80% at about {s.runs} runs per side" if s.runs is not None else "80% not within 400 runs"
            what = at + needed
        lines[name] = f"    {by}: simulated rate {s.rate:.2f}; {what}"
    summary = [
        f"{by}: {found.experiments} experiments (posterior draws), {args.sim_runs} simulated runs per cell and draw; "
        f"{len(found.cells)} cells simulated"
    ]
    if found.every_caught is not None and found.every_caught_independent is not None:
        summary.append(
            f"  at the planned runs the gate catches every simulated cell's drop in {found.every_caught:.0%} "
            f"of experiments ({found.every_caught_independent:.0%} if the cells were independent)"
        )
    summary += [f"  not simulated: {why}" for why in found.left_out]
    lines[""] = "\n".join(summary)
    return lines
