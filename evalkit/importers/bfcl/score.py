"""BFCL's score beside evalkit's: for the runs of imported BFCL cases in a results file, per BFCL
category and report column, the accuracy by evalkit's checker (the recorded verdicts) and by BFCL's own
checker on the same final outputs, in BFCL's category names, like a row of BFCL's leaderboard.

A run's scenario id is `bfcl-` + the BFCL case id (`_` as `-`, lower-cased), as `evalkit import bfcl`
names it: that finds the case, its functions and its possible answer in the installed `bfcl-eval`.
BFCL's checker judges a single-turn case's final reply (`bfcl_output`), a multi-turn case's transcript
turn by turn (`bfcl_turns`). A run it cannot judge (an infra error, an unsupported cell, no reply, a
case the installed data lacks, a checker error) is counted apart with the reason, never dropped.
Without `bfcl-eval` the table still has evalkit's column, and BFCL's says it is not installed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from importlib import metadata
from typing import Any, Literal, Protocol

from evalkit.errors import EvalkitError
from evalkit.importers.bfcl.data import CATEGORIES, load_category, require_bfcl
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.report.bfcl_table import BFCL_MISSING, BfclEntry, BfclRow, BfclScore
from evalkit.report.data import Column, ReportData
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results, RunRow

__all__ = ["CheckerJudge", "Judge", "bfcl_category", "bfcl_score", "with_bfcl_score"]

# longest first, so that `parallel_multiple` is found before `parallel` and `multiple`
_BY_LENGTH = sorted(CATEGORIES, key=len, reverse=True)


def bfcl_category(scenario_id: str) -> str | None:
    """The BFCL category of an imported case's scenario id (None: not an imported BFCL case)."""
    for category in _BY_LENGTH:
        prefix = "bfcl-" + category.replace("_", "-") + "-"
        if scenario_id.startswith(prefix) and scenario_id[len(prefix) : len(prefix) + 1].isdigit():
            return category
    return None


class Judge(Protocol):
    """BFCL's verdict on a run's output: True/False, or why it cannot judge the run."""

    version: str

    def __call__(self, category: str, run: RunRecord) -> bool | str: ...


class CheckerJudge:
    """BFCL's own checker from the installed `bfcl-eval`, on the case the run's scenario was imported from."""

    def __init__(self) -> None:
        require_bfcl()
        self.version = metadata.version("bfcl-eval")
        self._cases: dict[str, dict[str, tuple[dict[str, Any], dict[str, Any] | None]]] = {}

    def _case(self, category: str, scenario_id: str) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        if category not in self._cases:
            self._cases[category] = {
                "bfcl-" + case["id"].replace("_", "-").lower(): (case, answer)
                for case, answer in load_category(category)
            }
        return self._cases[category].get(scenario_id)

    def __call__(self, category: str, run: RunRecord) -> bool | str:
        found = self._case(category, run.cell.scenario)
        if found is None:
            return f"case not in bfcl-eval {self.version}"
        case, answer = found
        truth = answer["ground_truth"] if answer else None
        try:
            # imported here: bfcl_eval (and, for multi-turn, its backends) load only when a run is judged
            from evalkit.importers.bfcl import reference

            if category.startswith("multi_turn"):
                return reference.bfcl_multi_turn_verdict(case, reference.bfcl_turns(run.messages), truth or [])
            if not run.calls:
                return "no model reply"
            output = reference.bfcl_output(run.calls[-1].completion)  # the reply the run ended on
            return reference.bfcl_verdict(category, case["function"], output, truth)
        except ImportError as exc:
            return f"BFCL's checker cannot be imported ({exc.name or exc})"
        except Exception as exc:  # BFCL's code on untrusted output: its failure is a reason, not a crash
            return f"BFCL's checker failed ({type(exc).__name__})"


def _whole_runs(results: Results[RunRow], wanted: set[str]) -> dict[str, RunRecord]:
    """The records of the `wanted` runs with their transcripts. A report reads runs without them
    (`evalkit.results.scan`), so the files are read again whole, through the same reader and
    the same rule for a run id seen twice (`load_results`); nothing is picked out by cutting lines."""
    if results.transcripts is None:
        return {run.run_id: run for run in results.runs if isinstance(run, RunRecord) and run.run_id in wanted}
    return {run.run_id: run for run in load_results(results.paths).runs if run.run_id in wanted}


@dataclass
class _Tally:
    runs: int = 0
    evalkit_correct: int = 0
    evalkit_counted: int = 0
    bfcl_correct: int = 0
    bfcl_judged: int = 0
    disagree: int = 0
    not_judged: Counter[str] = field(default_factory=Counter)  # why BFCL's checker could not judge a run

    def add(self, run: RunRow, verdict: bool | str | None) -> None:
        self.runs += 1
        self.evalkit_counted += run.counted
        self.evalkit_correct += run.counted and run.correct
        if isinstance(verdict, str):
            self.not_judged[verdict] += 1
        elif verdict is not None:
            self.bfcl_judged += 1
            self.bfcl_correct += verdict
            self.disagree += run.counted and verdict != run.correct

    def entry(self, category: str, judged: bool) -> BfclEntry:
        return BfclEntry(
            category,
            self.runs,
            self.evalkit_correct,
            self.evalkit_counted,
            self.bfcl_correct if judged else None,
            self.bfcl_judged if judged else None,
            self.disagree if judged else None,
            tuple(sorted(self.not_judged.items())),
        )


def bfcl_score(results: Results[RunRow], columns: Iterable[Column], judge: Judge | None) -> BfclScore | None:
    """The table for the report columns `columns`; None when the results hold no imported BFCL case.
    `judge` None: BFCL's checker is not available (its column says so)."""
    bfcl_runs = [(run, category) for run in results.runs if (category := bfcl_category(run.cell.scenario))]
    if not bfcl_runs:
        return None
    whole = _whole_runs(results, {run.run_id for run, _ in bfcl_runs}) if judge is not None else {}
    tallies: dict[tuple[tuple[str, ...], str], _Tally] = defaultdict(_Tally)
    for run, category in bfcl_runs:
        verdict: bool | str | None = None
        if not run.counted:  # no answer of the model's to judge: infra error, unsupported
            verdict = run.outcome.replace("_", " ")
        elif judge is not None:
            verdict = judge(category, whole[run.run_id]) if run.run_id in whole else "no transcript in the file"
        c = run.cell
        tallies[(c.backend, c.model, c.mode, c.strategy), category].add(run, verdict)
    categories = tuple(c for c in CATEGORIES if any(key[1] == c for key in tallies))
    rows = []
    for column in columns:
        key = (column.backend, column.model, column.mode, column.strategy)
        entries = tuple(
            tallies[key, c].entry(c, judge is not None) if (key, c) in tallies else None for c in categories
        )
        if any(entries):
            rows.append(BfclRow(column.label, column.simulated, entries))
    return BfclScore(
        categories,
        tuple(rows),
        judge.version if judge is not None else None,
        None if judge is not None else BFCL_MISSING,
        tuple(DELIBERATE_DIFFERENCES.items()),
    )


def installed_judge() -> Judge | None:
    """BFCL's checker, or None when `bfcl-eval` is not installed."""
    try:
        return CheckerJudge()
    except EvalkitError:
        return None


def with_bfcl_score(
    data: ReportData, results: Results[RunRow], judge: Judge | Literal["installed"] | None = "installed"
) -> ReportData:
    """`data` with its BFCL score table (unchanged when the results hold no imported BFCL case).
    `judge`: BFCL's checker as installed (the default), another judge, or None (none available)."""
    if not any(bfcl_category(run.cell.scenario) for run in results.runs):
        return data
    chosen = installed_judge() if isinstance(judge, str) else judge
    return replace(data, bfcl_score=bfcl_score(results, data.columns, chosen))
