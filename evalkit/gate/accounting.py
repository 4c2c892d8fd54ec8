"""Why a cell is not judged: the gate's unit of account is every cell the baseline holds (and, with
`--sequential`, every cell the candidate config runs); a cell that cannot be compared is named with
its reason instead of being passed over. The reasons are in docs/gate.md ("Not judged").

A cell is not judged when it is missing on one side, when its infra errors are above
`max_infra_error_rate` in that cell (the limit holds per cell, not pooled over a column: a cell that
lost 60% of its runs says little even when its column lost 6%), or when it holds fewer runs than its
file's header planned (a partial or truncated file; a complete file planned with fewer runs per
cell than the baseline is a smaller design, and is judged).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from evalkit.results.escaping import plural
from evalkit.results.runs import Results, RunRow
from evalkit.run.config_diff import differing_fields

__all__ = [
    "MISSING_IN_CANDIDATE",
    "NOT_IN_BASELINE",
    "CellId",
    "cell_id",
    "config_warning",
    "first_reason",
    "infra_reason",
    "partial_reasons",
    "unpaired_summary",
]

CellId = tuple[str, str, str, str, str]  # backend, mode, strategy, family, scenario
# the two reasons a cell cannot be paired: one side never ran it
MISSING_IN_CANDIDATE = "missing in the candidate"
NOT_IN_BASELINE = "not in the baseline"


def cell_id(run: RunRow) -> CellId:
    c = run.cell
    return (c.backend, c.mode, c.strategy, c.family, c.scenario)


def infra_reason(runs: Iterable[RunRow], side: str, limit: float) -> str | None:
    """The reason a cell is not judged when its share of infra errors (of its supported runs) is
    above `limit` on this side, else None."""
    # per cell, not pooled over its column: a cell that lost 60% of its runs says little even when
    # its column lost 6%
    supported = [r for r in runs if r.outcome != "unsupported"]
    infra = sum(r.outcome == "infra_error" for r in supported)
    if supported and infra / len(supported) > limit:
        return (
            f"{infra} of {plural(len(supported), side + ' run')} "
            f"{'is an infra error' if infra == 1 else 'are infra errors'}"
            f", more than max_infra_error_rate {limit:.0%} in this cell"
        )
    return None


def _footerless(results: Results[RunRow]) -> bool:
    # a resumed file has several segments: only the last one of each file says how it ended
    last = {seg.path: seg for seg in results.segments}
    return any(seg.footer is None or seg.footer.status != "complete" for seg in last.values())


def partial_reasons(results: Results[RunRow], side: str) -> dict[CellId, str]:
    """Scenario cells holding fewer runs than the header's `runs_per_cell`, with the reason. A file
    without a footer (truncated, killed or still running) is named as such. Results built in memory
    (no file segments read) carry no record of how they were written, and are taken as complete."""
    if not results.headers or not results.segments:
        return {}
    planned = max(h.runs_per_cell for h in results.headers)
    # distinct run indices, not runs: a repeated record must not make up for a missing one
    indices: dict[CellId, set[int]] = defaultdict(set)
    for run in results.runs:
        if run.index < planned:
            indices[cell_id(run)].add(run.index)
    why = (
        "the file has no footer (truncated, killed or still running)"
        if _footerless(results)
        else "the run did not finish"
    )
    return {
        key: f"{len(seen)} of {planned} {side} runs recorded: {why}"
        for key, seen in indices.items()
        if len(seen) < planned
    }


def first_reason(runs: Sequence[RunRow], partial: dict[CellId, str]) -> str | None:
    """For a cell (pooled or not): the reason of its first partial scenario cell, if any."""
    for key in sorted({cell_id(r) for r in runs}):
        if key in partial:
            # a pooled cell names the scenario (family/scenario) whose runs are missing
            return f"{'/'.join(key[3:])}: {partial[key]}" if len({cell_id(r) for r in runs}) > 1 else partial[key]
    return None


_NAMED = 5  # cells named per side; the rest are counted


def config_warning(
    baseline: Results[RunRow], candidate: Results[RunRow], unjudged: Sequence[tuple[str, str]]
) -> str | None:
    """A gate compares one config run on two versions of the code. When the two files' headers hold
    different configs, say so, with the fields that differ and the cells only one side has."""
    if not baseline.headers or not candidate.headers:
        return None
    base, cand = baseline.headers[0], candidate.headers[0]
    # equal hashes: equal configs, whatever their key order; only then is the field by field diff skipped
    fields = differing_fields(dict(base.config), dict(cand.config)) if base.config_hash != cand.config_hash else []
    if not fields:
        return None
    shown = ", ".join(fields[:_NAMED]) + (f" and {len(fields) - _NAMED} more" if len(fields) > _NAMED else "")
    sides = []
    for reason, side in ((MISSING_IN_CANDIDATE, "baseline"), (NOT_IN_BASELINE, "candidate")):
        cells = [name for name, why in unjudged if why == reason]
        if cells:
            more = f" and {len(cells) - _NAMED} more" if len(cells) > _NAMED else ""
            sides.append(f"{len(cells)} only in the {side} ({', '.join(cells[:_NAMED])}{more})")
    cells_text = "; cells not shared: " + "; ".join(sides) if sides else "; every cell is on both sides"
    return (
        f"the baseline and the candidate come from different configs ({base.config_name} and "
        f"{cand.config_name}; they differ in {shown}){cells_text}"
    )


def unpaired_summary(unjudged: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """Across two configs most cells not judged are the configs' difference (one side never ran them,
    or ran them in another setup), not holes in a run: the cells to name one by one (a reason that
    holds a few), and one line per reason that holds many, with the count and the first names."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for name, why in unjudged:
        by_reason[why].append(name)
    kept = [(name, why) for name, why in unjudged if len(by_reason[why]) <= _NAMED]
    lines = [
        f"{plural(len(cells), 'cell')}: {why} ({', '.join(cells[:_NAMED])} and {len(cells) - _NAMED} more)"
        for why, cells in by_reason.items()
        if len(cells) > _NAMED
    ]
    return kept, lines
