"""Integrity on read: what reports and the gate must not pass over silently in a results file.

A results file can be cut short (a killed run), edited by hand, or written by two processes at once.
`check_integrity` compares each segment's footer with the records present, looks for runs recorded
twice with different verdicts, and counts the runs each cell misses against the header's
`runs_per_cell`. `load_checked` is the read path of `report` and `gate` (one streaming pass, compact
rows): errors raise, warnings print. `merge` refuses its inputs by the same `raise_errors`, so a
merged file never holds what a report of its shards would refuse.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evalkit.errors import BackendError, ResultsError
from evalkit.results.escaping import plural
from evalkit.results.reader import load_results
from evalkit.results.runs import Results, RunRow
from evalkit.results.scan import scan_results

__all__ = [
    "InfraCount",
    "Problem",
    "check_integrity",
    "infra_excess",
    "load_checked",
    "raise_errors",
    "scenario_drift",
    "unreachable_backends",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Problem:
    """Something wrong with a results file: an `error` makes its numbers untrustworthy."""

    severity: Literal["error", "warning"]
    message: str


_MAX_CELLS_LISTED = 5


def check_integrity(results: Results[RunRow]) -> list[Problem]:
    """What a report or gate must not pass over silently.

    Errors: no run records at all; a footer counting other than the records of its segment (records
    were removed, or another process wrote into the file); one run recorded with two verdicts; a run
    that contradicts itself (correct but not completed: the judge never writes that, an edit did).
    Warnings: a file whose last segment has no footer (killed, or still running) or closed with too
    many infra errors (`infra_errors`: its backend was down), identical repeats,
    cells with fewer runs than the header's `runs_per_cell` (an interrupted or partial run), and a
    scenario whose runs were judged against several versions of it.
    """
    where = ", ".join(results.paths)
    problems: list[Problem] = []
    if not results.runs:
        problems.append(Problem("error", f"{where}: no run records (header only): nothing to report"))
    for seg in results.segments:
        # a segment without a footer has nothing to count against: `_no_footer` names it instead
        if seg.footer is not None and seg.footer.runs_written != seg.runs_present:
            problems.append(
                Problem(
                    "error",
                    f"{seg.path}: a footer counts {seg.footer.runs_written} runs written "
                    f"but its segment holds {seg.runs_present}: "
                    + (
                        "records were removed"
                        if seg.runs_present < seg.footer.runs_written
                        else "another process wrote into the file"
                    ),
                )
            )
    problems += _no_footer(results) + _infra_footer(results)
    if results.conflicts:
        more = f" and {len(results.conflicts) - 1} more" if len(results.conflicts) > 1 else ""
        problems.append(
            Problem("error", f"{where}: run {results.conflicts[0]}{more} recorded twice with different verdicts")
        )
    problems += _contradictions(results, where)
    # a repeat with the same verdict changes no number (the first is used); one that differs is an error
    identical = results.duplicates - len(results.conflicts)
    if identical:
        problems.append(
            Problem("warning", f"{where}: {identical} runs recorded twice with the same verdict (the first is used)")
        )
    problems += _missing_runs(results, where)
    problems += _mixed_versions(results, where)
    return problems


def incompleteness(results: Results[RunRow]) -> list[str]:
    """Why a file is not a finished run, if it is not: no footer after its last records, or cells
    with fewer runs than planned, or a last segment closed by too many infra errors. A report shows
    these as a banner: its comparisons are provisional."""
    found = _no_footer(results) + _infra_footer(results) + _missing_runs(results, ", ".join(results.paths))
    return [p.message for p in found]


def _no_footer(results: Results[RunRow]) -> list[Problem]:
    # only each file's last segment: an earlier one without a footer was resumed, and finished later
    last = {seg.path: seg for seg in results.segments}
    return [
        Problem(
            "warning",
            f"{path}: no footer after the last records: the run was killed or is still "
            "running (`run --resume` finishes it)",
        )
        for path, seg in last.items()
        if seg.footer is None
    ]


def _infra_footer(results: Results[RunRow]) -> list[Problem]:
    """A file whose last segment closed with `infra_errors` (the gate reads it as not complete too);
    a `--resume --retry-infra` that brings the backend back closes the file `complete` again."""
    last = {seg.path: seg for seg in results.segments}
    return [
        Problem(
            "warning",
            f"{path}: the run did not complete: {seg.footer.reason or 'too many infra errors'} "
            "(`run --resume --retry-infra` runs them again)",
        )
        for path, seg in last.items()
        if seg.footer is not None and seg.footer.status == "infra_errors"
    ]


def _mixed_versions(results: Results[RunRow], where: str) -> list[Problem]:
    """A scenario whose counted runs were judged against several versions of it (edited between
    two invocations): its rates mix them. Records without a hash (older files) cannot tell."""
    versions: dict[str, set[str]] = {}
    for run in results.runs:
        # an uncounted run was not judged, so the version it ran against does not reach a rate
        if run.counted and run.scenario_hash is not None:
            versions.setdefault(run.cell.scenario, set()).add(run.scenario_hash)
    mixed = sorted((s, len(v)) for s, v in versions.items() if len(v) > 1)
    if not mixed:
        return []
    named = ", ".join(f"{s} ({n} versions)" for s, n in mixed[:_MAX_CELLS_LISTED])
    more = f" and {len(mixed) - _MAX_CELLS_LISTED} more" if len(mixed) > _MAX_CELLS_LISTED else ""
    return [
        Problem(
            "warning",
            f"{where}: runs of one scenario judged against different versions of it: {named}{more}; "
            "`evalkit rescore` re-judges them all against the current one",
        )
    ]


def scenario_drift(baseline: Results[RunRow], candidate: Results[RunRow]) -> Problem | None:
    """Scenarios judged against one version in the baseline and another in the candidate: a gate
    comparing them compares two different tests. Records without a hash (older files) cannot tell."""

    def versions(results: Results[RunRow]) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {}
        for run in results.runs:
            if run.counted and run.scenario_hash is not None:
                seen.setdefault(run.cell.scenario, set()).add(run.scenario_hash)
        return seen

    before, after = versions(baseline), versions(candidate)
    # drift only when no version is shared: a version on both sides still compares like with like there
    drifted = sorted(s for s in before.keys() & after.keys() if not before[s] & after[s])
    if not drifted:
        return None
    named = ", ".join(drifted[:_MAX_CELLS_LISTED])
    more = f" and {len(drifted) - _MAX_CELLS_LISTED} more" if len(drifted) > _MAX_CELLS_LISTED else ""
    return Problem(
        "warning",
        f"scenarios judged against a different version in the baseline and the candidate: {named}{more}; "
        "their cells compare two different tests (`evalkit rescore` the baseline to judge both alike)",
    )


def _contradictions(results: Results[RunRow], where: str) -> list[Problem]:
    bad = [r.run_id for r in results.runs if r.correct and not r.completed]
    if not bad:
        return []
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return [Problem("error", f"{where}: run {bad[0]}{more} recorded as correct but not completed")]


def _missing_runs(results: Results[RunRow], where: str) -> list[Problem]:
    if not results.headers or not results.runs:
        return []
    # a resume may raise `runs_per_cell`: the largest plan is the one the file should hold
    expected = max(h.runs_per_cell for h in results.headers)
    have: Counter[tuple[str, ...]] = Counter(r.cell.key() for r in results.runs if r.index < expected)
    short = sorted((expected - n, "/".join(key)) for key, n in have.items() if n < expected)
    if not short:
        return []
    listed = "; ".join(f"{name} misses {n}" for n, name in sorted(short, reverse=True)[:_MAX_CELLS_LISTED])
    more = f"; and {len(short) - _MAX_CELLS_LISTED} more cells" if len(short) > _MAX_CELLS_LISTED else ""
    total = sum(n for n, _ in short)
    return [Problem("warning", f"{where}: {total} runs missing against {expected} per cell: {listed}{more}")]


def load_checked(
    paths: Iterable[str | Path],
    warn: Callable[[str], None] | None = None,
    *,
    transcripts: int = 3,
    whole: bool = False,
) -> Results[RunRow]:
    """`scan_results` (compact rows, and whole records for up to `transcripts` failed runs per cell;
    with `whole`, every record whole: `load_results`), then `check_integrity`: errors raise
    `ResultsError`, warnings go to `warn` (by default the `evalkit` logger, which the CLI shows on
    standard error). What reports, the gate and the exports read through."""
    results = load_results(paths) if whole else scan_results(paths, transcripts)
    for problem in raise_errors(check_integrity(results)):
        (warn or _log.warning)(problem.message)
    return results


def raise_errors(problems: list[Problem]) -> list[Problem]:
    """Raise the errors among `problems` as one `ResultsError`; with none, return the warnings."""
    errors = [p.message for p in problems if p.severity == "error"]
    if errors:
        raise ResultsError("; ".join(errors))
    return problems


@dataclass
class InfraCount:
    """One backend's runs that say something (not `unsupported`), its infra errors, the first one's text."""

    runs: int = 0
    infra: int = 0
    first_error: str | None = None

    def add(self, outcome: str, error: str | None) -> None:
        # an unsupported cell never reached the backend: it says nothing of whether the backend is up
        if outcome == "unsupported":
            return
        self.runs += 1
        if outcome == "infra_error":
            self.infra += 1
            if self.first_error is None and error and error.strip():
                self.first_error = error.strip().splitlines()[0]


def infra_excess(counts: dict[str, InfraCount], limit: float) -> str | None:
    """One line naming each backend whose share of infra errors passes `limit` (a run config's
    `max_infra_error_rate`), with its first error; None when none does."""
    over = [(label, c) for label, c in sorted(counts.items()) if c.runs and c.infra / c.runs > limit]
    if not over:
        return None
    return "; ".join(
        f"backend {label!r}: {plural(c.infra, 'infra error')} in {plural(c.runs, 'run')}, more than "
        f"max_infra_error_rate {limit:.0%} (the first: {c.first_error or 'no error text'})"
        for label, c in over
    )


def unreachable_backends(results: Results[RunRow]) -> BackendError | None:
    """An error naming each backend whose every counted run is an `infra_error`, with the first error text."""
    runs_by_backend: dict[str, list[tuple[str, str | None]]] = {}
    for run in results.runs:
        if run.outcome != "unsupported":
            runs_by_backend.setdefault(run.cell.backend, []).append((run.outcome, run.error))
    dead = {
        label: next((e.splitlines()[0] for _, e in runs if e and e.strip()), "no error text")
        for label, runs in runs_by_backend.items()
        if runs and all(o == "infra_error" for o, _ in runs)
    }
    if not dead:
        return None
    return BackendError(
        "; ".join(
            f"backend {label!r}: every run failed (infra_error): {error}" for label, error in sorted(dead.items())
        )
    )
