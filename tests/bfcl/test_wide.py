"""The committed wider BFCL run stays consistent: configs/bfcl-wide.yaml (native, `trust_text`) and
configs/bfcl-wide-grammar.yaml (prompt, grammar) ran SmolLM2-135M-Instruct on `scenarios/bfcl-wide/`,
a sample of every BFCL category beyond `scenarios/bfcl/`, with `--record`. Their files are real, the
recordings hold every stored reply, today's loop and checker re-judge every run as recorded
(`rescore`), and where BFCL's checker judges a run differently a named rule explains it. The README's
per-category table is generated from the same files (tests/report/test_readme_findings.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.extras import needs_extra

# the multi-turn cases run on BFCL's own backends, and BFCL's checker judges
pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.backends.packaged import MODELS
from evalkit.chat import Completion
from evalkit.importers.bfcl.score import bfcl_category
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.run.rescore import rescore_results
from evalkit.scenario.model import Scenario, load_scenarios

ROOT = Path(__file__).resolve().parent.parent.parent
# results file -> its recordings
FILES = {
    ROOT / "results/bfcl-wide.jsonl": ROOT / "recordings/bfcl-wide/smollm2/recordings.jsonl",
    ROOT / "results/bfcl-wide-grammar.jsonl": ROOT / "recordings/bfcl-wide-grammar/smollm2/recordings.jsonl",
}

# where a run's verdicts may differ: the named rule that applies to it
RULES: dict[str, Callable[[RunRecord, str], bool]] = {
    "degenerate_reply_fails": lambda run, category: run.failure == "degenerate_output",
    "no_call_where_bfcl_expects_none": lambda run, category: (
        category.startswith("multi_turn") and any(not i.passed and i.item.endswith("no tool calls") for i in run.check)
    ),
}


def _scenarios() -> list[Scenario]:
    return load_scenarios(sorted((ROOT / "scenarios/bfcl-wide").glob("*/*.yaml")))


def _verdicts(runs: list[RunRecord]) -> dict[str, tuple[object, ...]]:
    return {
        r.run_id: (r.outcome, r.completed, r.correct, r.failure, r.retries, r.model_calls, [i.item for i in r.check])
        for r in runs
    }


def _as_stored(completion: Completion, run_id: str) -> dict[str, object]:
    """A completion to compare; in prompt mode without its calls: the stored one holds the calls parsed
    from the text, the recording the server's reply as it came (the text, no calls)."""
    return completion.model_dump(exclude={"tool_calls"} if "/prompt/" in run_id else None)


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.stem)
def test_the_committed_runs_are_real_and_recorded(path: Path) -> None:
    results = load_results([path])
    assert results.headers[0].backends["smollm2"]["model_sha256"] == MODELS["smollm2"].sha256
    assert not results.simulated
    recorded = {}
    for line in FILES[path].read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "completion" not in entry:  # a server error recorded as such (the infra-error run)
            continue
        recorded[entry["run_id"], entry["call_index"]] = _as_stored(
            Completion.model_validate(entry["completion"]), entry["run_id"]
        )
    stored = {
        (run.run_id, call.index): _as_stored(call.completion, run.run_id) for run in results.runs for call in run.calls
    }
    finished = {run.run_id for run in results.runs}
    # a partial file's recordings also hold the calls of the runs that were going when it was stopped
    assert {key: c for key, c in recorded.items() if key[0] in finished} == stored
    if results.footers[-1].status == "complete":
        assert set(recorded) == set(stored)


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.stem)
def test_rescoring_reproduces_every_verdict(path: Path, tmp_path: Path) -> None:
    """REAL: each run's stored completions, re-judged by today's loop and checker, give the recorded verdict."""
    rescored = tmp_path / "rescored.jsonl"
    rescore_results(path, rescored, _scenarios())
    assert _verdicts(load_results([rescored]).runs) == _verdicts(load_results([path]).runs)


@pytest.mark.parametrize("path", list(FILES), ids=lambda p: p.stem)
def test_every_case_ran_once(path: Path) -> None:
    """Once per case; a file whose footer says `interrupted` (a partial run, labelled so in the README's
    generated block) holds fewer, and `--resume` adds the rest."""
    results = load_results([path])
    ran = [r.cell.scenario for r in results.runs]
    assert len(ran) == len(set(ran)) and set(ran) <= {s.id for s in _scenarios()}
    assert results.footers and results.footers[-1].runs_written <= len(ran)
    if results.footers[-1].status == "complete":
        assert sorted(ran) == sorted(s.id for s in _scenarios())
    assert all(bfcl_category(scenario) for scenario in ran)


def test_bfcl_judges_every_run_as_evalkit_does() -> None:
    """REAL: BFCL's own checker, on each committed run's final output (a multi-turn run's calls turn by
    turn), gives evalkit's verdict, or a named rule (`DELIBERATE_DIFFERENCES`) says why not."""
    from evalkit.importers.bfcl.score import CheckerJudge

    judge = CheckerJudge()
    unexplained, explained = [], []
    for path in FILES:
        for run in load_results([path]).runs:
            category = bfcl_category(run.cell.scenario)
            assert category is not None
            theirs = judge(category, run)
            assert isinstance(theirs, bool), f"{run.run_id}: BFCL cannot judge it: {theirs}"
            if theirs == run.correct:
                continue
            rules = [name for name, applies in RULES.items() if applies(run, category)]
            line = f"{path.stem} {run.cell.scenario}: evalkit {run.correct} ({run.failure}), BFCL {theirs}"
            (explained if rules else unexplained).append(line)
    assert not unexplained, "\n".join(unexplained)
    assert set(RULES) <= set(DELIBERATE_DIFFERENCES)
    assert len(explained) <= 2, "\n".join(explained)  # rules are exceptions, not the norm
