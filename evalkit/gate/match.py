"""Which runs the gate compares: like with like, over counted runs.

An infra error says nothing about the model, so it is left out of the rates; but leaving it out on
one side only can change what a pooled cell averages over. With nine scenarios at 25/25 and a tenth
whose 25 baseline runs were all infra errors, a pooled baseline of 225/225 against a candidate of
225/250 is a 10-point "drop" with nothing changed. So the gate compares the same things on both
sides: pairs counted on both sides when runs pair up, else per scenario the same number of counted
runs (the first by run index), and scenarios counted on both sides only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from evalkit.errors import GateInputError
from evalkit.gate.config import GateConfig
from evalkit.results.escaping import plural
from evalkit.results.runs import RunRow

__all__ = ["Matched", "check_infra", "match_runs", "scenario_mismatch"]

PairKey = tuple[str, int, int]


@dataclass(frozen=True)
class Matched:
    base: list[RunRow]
    cand: list[RunRow]
    base_outcomes: list[bool]
    cand_outcomes: list[bool]
    paired: bool  # base[i] and cand[i] are the same scenario, run index and seed
    notes: list[str] = field(default_factory=list)
    why_empty: str = ""


def check_infra(runs: Sequence[RunRow], side: str, config: GateConfig) -> None:
    """A broken backend makes the input unusable: infra errors over the limit in a strategy column
    (backend, mode, strategy, pooled over scenarios) raise GateInputError."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in runs:
        # an unsupported cell never ran: neither a run of the backend nor a failure of it
        if run.outcome != "unsupported":
            c = run.cell
            t = tally[f"{c.backend}/{c.mode}/{c.strategy}"]
            t[0] += 1
            t[1] += run.outcome == "infra_error"
    for name, (supported, infra) in sorted(tally.items()):
        if infra / supported > config.max_infra_error_rate:
            raise GateInputError(
                f"{name}: {infra} of {plural(supported, side + ' run')} {_are_infra(infra)}, more than "
                f"max_infra_error_rate {config.max_infra_error_rate:.0%}; fix the backend and rerun"
            )


def _are_infra(n: int) -> str:
    return "is an infra error" if n == 1 else "are infra errors"


def _pair_key(run: RunRow) -> PairKey:
    return (run.cell.scenario, run.index, run.seed)


def _pairs(base: Sequence[RunRow], cand: Sequence[RunRow]) -> tuple[list[RunRow], list[RunRow]] | None:
    left, right = {_pair_key(r): r for r in base}, {_pair_key(r): r for r in cand}
    # a key seen twice, or on one side only: the runs do not pair up
    if len(left) != len(base) or len(right) != len(cand) or left.keys() != right.keys():
        return None
    # a pair counts only when both of its runs do: an infra error takes its partner out with it
    keys = sorted(k for k in left if left[k].counted and right[k].counted)
    return [left[k] for k in keys], [right[k] for k in keys]


def _by_scenario(runs: Sequence[RunRow]) -> dict[str, list[RunRow]]:
    out: dict[str, list[RunRow]] = defaultdict(list)
    # by run index, not file order: a resumed or merged file keeps the same runs first
    for run in sorted(runs, key=lambda r: r.index):
        if run.counted:
            out[run.cell.scenario].append(run)
    return out


def _same_mix(base: Sequence[RunRow], cand: Sequence[RunRow], pooled: bool) -> tuple[list[RunRow], list[RunRow]]:
    b, c = _by_scenario(base), _by_scenario(cand)
    keep_b: list[RunRow] = []
    keep_c: list[RunRow] = []
    # a scenario counted on one side only would weigh in one side's pool only
    for scenario in sorted(b.keys() & c.keys()):
        # pooled: as many runs of each scenario on both sides, so both pools average the same mix
        n = min(len(b[scenario]), len(c[scenario])) if pooled else None
        keep_b += b[scenario][:n]
        keep_c += c[scenario][:n]
    return keep_b, keep_c


def scenario_mismatch(base: Sequence[RunRow], cand: Sequence[RunRow]) -> str | None:
    """Pooled cells: both sides must have run the same scenarios; else why not (the cell is not judged)."""
    b = {r.cell.scenario for r in base if r.outcome != "unsupported"}
    c = {r.cell.scenario for r in cand if r.outcome != "unsupported"}
    if b == c:
        return None
    parts = [
        f"only in the {side}: {', '.join(sorted(names)[:5])}" + (" ..." if len(names) > 5 else "")
        for side, names in (("baseline", b - c), ("candidate", c - b))
        if names
    ]
    return (
        f"baseline and candidate ran different scenarios ({'; '.join(parts)}); "
        "pooled rates over different scenarios cannot be compared"
    )


def _left_out(name: str, base: Sequence[RunRow], cand: Sequence[RunRow], kept: tuple[int, int]) -> list[str]:
    counted = (sum(r.counted for r in base), sum(r.counted for r in cand))
    if counted == kept or not kept[0]:
        return []
    lost = _by_scenario(base).keys() ^ _by_scenario(cand).keys()
    missing = f"; scenarios without counted runs on one side: {', '.join(sorted(lost))}" if lost else ""
    return [
        f"{name}: compared {kept[0]} runs per side, like with like; left out {counted[0] - kept[0]} baseline "
        f"and {counted[1] - kept[1]} candidate counted runs whose counterpart was an infra error{missing}"
    ]


def _why_empty(base: Sequence[RunRow], cand: Sequence[RunRow]) -> str:
    parts = [
        f"{side}: {plural(sum(r.outcome == 'infra_error' for r in runs), 'infra error')} of {plural(len(runs), 'run')}"
        for side, runs in (("baseline", base), ("candidate", cand))
        if not any(r.counted for r in runs)
    ]
    return "no counted runs on both sides (" + "; ".join(parts or ["no scenario counted on both sides"]) + ")"


def match_runs(
    name: str, base: Sequence[RunRow], cand: Sequence[RunRow], config: GateConfig, *, pooled: bool
) -> Matched:
    """The runs of one cell that the gate compares, and the outcomes of `config.metric` (pooled
    cells: the caller has checked `scenario_mismatch`)."""
    pairs = _pairs(base, cand) if config.pairing != "unpaired" else None
    if pairs is None and config.pairing == "paired":
        raise GateInputError("pairing: paired, but the runs do not pair up by scenario, index and seed")
    kept_b, kept_c = pairs if pairs is not None else _same_mix(base, cand, pooled)
    notes = _left_out(name, base, cand, (len(kept_b), len(kept_c)))
    # `metric` names one of a run's boolean fields (`GateConfig.metric` allows no other)
    return Matched(
        kept_b,
        kept_c,
        [bool(getattr(r, config.metric)) for r in kept_b],
        [bool(getattr(r, config.metric)) for r in kept_c],
        pairs is not None,
        notes,
        "" if kept_b and kept_c else _why_empty(base, cand),
    )
