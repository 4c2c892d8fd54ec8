"""Issue 38 item 5 on the committed results: the simulated model writes calls as text in native mode
(small-local's illustrative `call_as_text`), so in `results/forge-sim-0.10.0.jsonl` evalkit's
`rescue_parse` has calls to recover and the side-by-side table's rescue rows compare something that
`trust_text` (and `retry_nudge`) do not do. Counted from typed fields: interventions, verdicts, seeds."""

from __future__ import annotations

from pathlib import Path

from evalkit.report.data import build_report
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "results/forge-sim-0.10.0.jsonl"


def _direct(results: Results, strategy: str) -> dict[tuple[str, int], RunRecord]:
    """The `direct` entry's (no proxy) counted native runs of one stack, by scenario and index."""
    return {
        (r.cell.scenario, r.index): r
        for r in results.runs
        if r.cell.backend == "direct" and r.cell.mode == "native" and r.cell.strategy == strategy and r.counted
    }


def _rescued(run: RunRecord) -> bool:
    return any(i.strategy == "rescue_parse" and i.action == "rescue" for i in run.interventions)


def _correct(runs: dict[tuple[str, int], RunRecord]) -> int:
    return sum(r.correct for r in runs.values())


def test_rescue_parse_recovers_calls_and_only_those_runs_differ_from_trust_text() -> None:
    results = load_results([COMMITTED])
    trust, rescue = _direct(results, "trust_text"), _direct(results, "rescue_parse")
    assert trust.keys() == rescue.keys() and all(trust[k].seed == rescue[k].seed for k in trust)  # paired
    rescued = {k for k, r in rescue.items() if _rescued(r)}
    assert rescued  # the point of item 5: at call_as_text 0 this set was empty
    # same seed, same draws: a run with no rescue is the trust_text run again, so only rescued runs differ
    differ = {k for k in trust if trust[k].correct != rescue[k].correct}
    assert differ and differ <= rescued
    gained = sum(rescue[k].correct and not trust[k].correct for k in differ)
    assert _correct(rescue) == _correct(trust) + gained - (len(differ) - gained) > _correct(trust)


def test_the_side_by_side_rescue_rows_show_the_rescued_columns_not_trust_texts() -> None:
    results = load_results([COMMITTED])
    lines = build_report(results, include_power=False).side_by_side
    overall = {line.claim: line for line in lines if line.scope == "all scenarios"}
    for claim, stack, without in (
        ("rescue, no retry", "rescue_parse", "trust_text"),
        ("validate, rescue, retry 3 (Forge's defaults)", "rescue+nudge", "retry_nudge"),
    ):
        right = overall[claim].right
        assert right.column == f"direct · native · {stack}" and right.correct is not None
        runs = _direct(results, stack)
        assert any(_rescued(r) for r in runs.values()), stack
        assert right.correct.x == _correct(runs) != _correct(_direct(results, without)), claim


def test_the_prose_that_cites_these_counts_matches_the_committed_results() -> None:
    """The README's (or, once moved, a docs page's) sentence on the rescued calls, from the results."""
    results = load_results([COMMITTED])
    trust, rescue = _direct(results, "trust_text"), _direct(results, "rescue_parse")
    nudge, both = _direct(results, "retry_nudge"), _direct(results, "rescue+nudge")
    calls = sum(i.strategy == "rescue_parse" and i.action == "rescue" for r in rescue.values() for i in r.interventions)
    gained = sum(r.correct and not trust[k].correct for k, r in rescue.items())
    expected = (
        f"`rescue_parse` rescued {calls} calls in {sum(map(_rescued, rescue.values()))} of the `direct` entry's "
        f"{len(rescue)} runs, and only those runs differ from `trust_text`'s on the same seeds ({gained} turned "
        f"correct), so the side-by-side table's rescue columns are no longer `trust_text` and `retry_nudge` "
        f"again: `rescue_parse` {_correct(rescue)}/{len(rescue)} against {_correct(trust)}, `rescue+nudge` "
        f"{_correct(both)} against {_correct(nudge)}"
    )
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert any(expected in " ".join(page.read_text(encoding="utf-8").split()) for page in pages), expected
