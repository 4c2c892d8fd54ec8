"""`evalkit plan BASELINE [--margin D] [--drop D ...] [--profile PROFILE]`: the runs per cell a gate
needs to catch a drop, and what they cost, from the baseline's own rates, model calls and wall time;
with a profile, also the power and the runs needed by simulation from it (`evalkit.gate.simplan`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evalkit.cli.options import ALPHA, DROP, FUTILITY, MARGIN, PATH, RUNS, SIMULATIONS
from evalkit.gate.plan import POWER, CellPlan, Planned, plan_cells
from evalkit.results.integrity import load_checked
from evalkit.results.runs import Results, RunRow
from evalkit.stats.registry import UNPAIRED, Statistics

__all__ = ["add_arguments", "run"]

_PROFILE_HELP = (
    "also estimate, by simulation from this profile (a file or a packaged name such as fitted/smollm2), the "
    "power at the planned runs and the runs for 80%%: every experiment draws the profile from its fit's "
    "posterior and simulates every cell of the profile's model (cells correlated through the shared draw); "
    "the candidate fails each correct run with probability D/p, p the cell's mean simulated rate, so each "
    "cell's rate drops by D"
)


def add_arguments(p: argparse.ArgumentParser, statistics: Statistics = UNPAIRED) -> None:
    p.add_argument("baseline", nargs="+", type=PATH, help="baseline results file(s)")
    p.add_argument(
        "--drop",
        type=DROP,
        action="append",
        help="drop to catch (repeatable; default 0.1, or 0.1 beyond the margin: a drop no larger than the "
        "margin is never flagged)",
    )
    p.add_argument(
        "--margin", type=MARGIN, default=0.0, help="the gate's --margin: also the runs to show cells within it"
    )
    p.add_argument("--alpha", type=ALPHA, default=0.05, help="family-wise α (default 0.05)")
    p.add_argument(
        "--pairing",
        choices=["paired", "unpaired"],
        default="paired",
        help="paired (default): the candidate reruns the baseline's seeds, so the gate pairs runs (McNemar, or "
        "Tango's test with a margin); unpaired: other seeds (Boschloo, or Chan's test with a margin)",
    )
    p.add_argument("--test", choices=statistics.names, default=statistics.default, help="the gate's unpaired --test")
    p.add_argument(
        "--sequential",
        action="store_true",
        help="also the --max-runs of `gate --sequential` against this baseline that catches the drop with 80%%",
    )
    p.add_argument("--batch", type=RUNS, default=5, help="with --sequential: the gate's --batch (5)")
    p.add_argument("--futility", type=FUTILITY, default=0.1, help="with --sequential: the gate's --futility (0.1)")
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


def _planned(planned: Planned, side: str) -> str:
    """`171 pairs (exact power 0.81)`, with what a power well above 80% means, or why none."""
    if planned.runs is None:
        return planned.why_not
    text = f"{planned.runs:,} {side} (exact power {planned.power:.2f}"
    if planned.power is not None and planned.power >= POWER + 0.05 and planned.below is not None:
        text += (
            f"; planned for {POWER:.0%}: the least runs found that reach it, where the power jumps from "
            f"{planned.below:.2f} at one run fewer"
        )
    return text + ")"


def _line(c: CellPlan, side: str) -> str:
    head = f"  {c.name}: {c.base_x}/{c.base_n}: "
    if c.planned.runs is None:
        return head + c.planned.why_not
    cost = f"{c.planned.runs * c.calls_per_run:,.0f} model calls, {c.planned.runs * c.seconds_per_run:,.0f} s"
    parts = [_planned(c.planned, side), cost]
    if c.within is not None:
        shown = f"{c.within.runs:,}" if c.within.runs is not None else c.within.why_not
        parts.append(f"an unchanged cell is shown within the margin with 80% at {shown} {side}")
    if c.sequential is not None:
        if c.sequential.runs is None:
            parts.append(f"--sequential: {c.sequential.why_not}")
        else:
            parts.append(
                f"--sequential --max-runs {c.sequential.runs} (exact power {c.sequential.power:.2f} given the "
                f"baseline's counts; {c.sequential_expected:.0f} runs expected with nothing changed)"
            )
    return head + "; ".join(parts)


def _simulated_rates(args: argparse.Namespace, baseline: Results[RunRow]) -> Any:
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


def _drops(args: argparse.Namespace) -> list[float]:
    # by default 10 points beyond the margin: a drop at the margin itself is never a regression
    return args.drop or [round(args.margin + 0.1, 6)]


def run(args: argparse.Namespace) -> int:
    baseline = load_checked(args.baseline, transcripts=0)
    # simulated once for every --drop: the simulation is the slow part, the drops only read it
    simulation = _simulated_rates(args, baseline) if args.profile else None
    side = "pairs" if args.pairing == "paired" else "runs per side"
    for drop in _drops(args):
        cells = plan_cells(
            baseline,
            drop,
            alpha=args.alpha,
            margin=args.margin,
            pairing=args.pairing,
            test=args.test,
            sequential=args.sequential,
            batch=args.batch,
            futility=args.futility,
        )
        tests = sorted({c.planned.test for c in cells if c.planned.test})
        beyond = f" ({drop - args.margin:.0%} beyond the margin of {args.margin:.0%})" if args.margin > 0 else ""
        print(
            f"evalkit plan: {side} to catch a drop of {drop:.0%}{beyond} with {POWER:.0%} probability, exactly, "
            f"for the test the gate runs ({', '.join(tests) or 'none'}) at α/m = {args.alpha}/{len(cells)} "
            "(Holm's first step)"
            + (
                "; pairs with independent outcomes (runs that agree more often make the paired test stronger)"
                if args.pairing == "paired"
                else ""
            )
        )
        simulated = _simulate(args, simulation, drop, cells) if simulation is not None else {}
        for c in cells:
            print(_line(c, side))
            if c.name in simulated:
                print(simulated[c.name])
        # the cost of cells that cannot reach 80% is not summed: "more than the limit" has no cost to add
        known = [c.planned.runs for c in cells if c.planned.runs is not None]
        calls = sum(c.planned.runs * c.calls_per_run for c in cells if c.planned.runs is not None)
        seconds = sum(c.planned.runs * c.seconds_per_run for c in cells if c.planned.runs is not None)
        print(
            f"matrix: {len(cells)} cells; up to {max(known, default=0):,} {side}; {calls:,.0f} model calls and "
            f"{seconds / 3600:.1f} h of wall time (one side, at the baseline's averages)"
        )
        if "" in simulated:
            print(simulated[""])
    return 0


def _simulate(args: argparse.Namespace, simulation: Any, drop: float, cells: list[CellPlan]) -> dict[str, str]:
    """The lines the simulation adds: one per cell it simulated (by name), and the matrix's (key "")."""
    from evalkit.gate.simplan import simulate_plan

    planned = {c.name: c.planned.runs for c in cells}
    found = simulate_plan(
        simulation, drop, planned, alpha=args.alpha, margin=args.margin, paired=args.pairing == "paired", test=args.test
    )
    by = f"by simulation from {args.profile} (SIMULATED)"
    lines = {}
    for name, s in found.cells.items():
        if s.runs is None and s.power is None:
            what = f"no drop of {drop:.0%} is possible from {s.rate:.0%}"
            what = what if s.rate < drop else "80% not reached within 400 runs"
        else:
            at = f"power {s.power:.2f} at {planned[name]} runs; " if s.power is not None else ""
            needed = f"80% at about {s.runs} runs per side" if s.runs is not None else "80% not within 400 runs"
            what = at + needed
        observed = next((f" (observed {c.base_x / c.base_n:.2f})" for c in cells if c.name == name), "")
        lines[name] = f"    {by}: simulated rate {s.rate:.2f}{observed}; {what}"
    summary = [
        f"{by}: {found.experiments} experiments (posterior draws), {args.sim_runs} simulated runs per cell and draw; "
        f"{len(found.cells)} cells simulated"
    ]
    if found.every_caught is not None and found.every_caught_independent is not None:
        summary.append(
            f"  at the planned runs the gate catches every simulated cell's drop in {found.every_caught:.0%} "
            f"of experiments ({found.every_caught_independent:.0%} if the cells were independent)"
        )
    summary.append(
        "  why the figures differ: the exact ones take each cell's observed baseline rate as its true rate; the "
        "simulated ones take it from the profile, drawn from the fit's posterior and estimated from "
        f"{args.sim_runs} runs per draw, so they differ where the profile's rate differs from the observed one, "
        "and an uncertain rate (a spread of rates) needs other runs than a known one"
    )
    summary += [f"  not simulated: {why}" for why in found.left_out]
    lines[""] = "\n".join(summary)
    return lines
