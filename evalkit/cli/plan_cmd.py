"""`evalkit plan BASELINE [--margin D] [--drop D ...]`: the runs per cell a gate needs to catch a
drop, and what they cost, from the baseline's own rates, model calls and wall time."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.gate.plan import CellPlan, plan_cells
from evalkit.results.integrity import load_checked

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plan", help="runs per cell a gate needs to catch a drop, and their cost")
    p.add_argument("baseline", nargs="+", type=Path, help="baseline results file(s)")
    p.add_argument(
        "--drop", type=float, action="append", help="drop to catch (repeatable; default: the margin, or 0.1)"
    )
    p.add_argument(
        "--margin", type=float, default=0.0, help="the gate's --margin: also the runs to show cells within it"
    )
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise α (default 0.05)")
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


def run(args: argparse.Namespace) -> int:
    baseline = load_checked(args.baseline, transcripts=0)
    for drop in args.drop or [args.margin or 0.1]:
        cells = plan_cells(baseline, drop, alpha=args.alpha, margin=args.margin)
        print(
            f"evalkit plan: runs per side to catch a drop of {drop:.0%} with 80% probability, "
            f"Boschloo at α/m = {args.alpha}/{len(cells)} (Holm's first step)"
        )
        for c in cells:
            print(_line(c))
        known = [c for c in cells if c.runs is not None]
        calls = sum(c.runs * c.calls_per_run for c in known if c.runs is not None)
        seconds = sum(c.runs * c.seconds_per_run for c in known if c.runs is not None)
        most = max((c.runs for c in known if c.runs is not None), default=0)
        print(
            f"matrix: {len(cells)} cells; up to {most} runs per cell; {calls:.0f} model calls and "
            f"{seconds / 3600:.1f} h of wall time (one side, at the baseline's averages)"
        )
    return 0
