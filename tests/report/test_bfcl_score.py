"""The report's BFCL score: per BFCL category, evalkit's accuracy and BFCL's own checker's on the same
final outputs. The expected numbers are recomputed here from the results files' JSON lines and, for
BFCL's verdicts, with bfcl_eval's checker called directly, not through the code under test."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalkit.chat import Completion, Message
from evalkit.cli import main
from evalkit.importers.bfcl.score import with_bfcl_score
from evalkit.report.bfcl_table import BFCL_MISSING, BfclEntry, BfclScore
from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.jsonfmt import report_dict
from evalkit.report.markdown import render_markdown
from evalkit.results.integrity import load_checked
from evalkit.results.records import ModelCall, RunRecord
from tests.extras import needs_extra
from tests.report import records

ROOT = Path(__file__).resolve().parents[2]
SINGLE_TURN = ROOT / "results/bfcl-smollm2.jsonl"
MULTI_TURN = ROOT / "results/bfcl-miss-param.jsonl"
GRAMMAR = ROOT / "results/compare-models-bfcl-grammar.jsonl"


def _raw_runs(*paths: Path) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        out += [r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r["type"] == "run"]
    return out


def _category(scenario: str) -> str:
    """The category from where the committed scenario file lies (scenarios/bfcl/<category>/<id>.yaml)."""
    (found,) = (ROOT / "scenarios/bfcl").glob(f"*/{scenario}.yaml")
    return found.parent.name


def _label(run: dict[str, Any]) -> str:
    c = run["cell"]
    return " · ".join((c["backend"], c["model"], c["mode"], c["strategy"]))


def _entries(score: BfclScore) -> dict[tuple[str, str], BfclEntry]:
    return {(row.label, e.category): e for row in score.rows for e in row.entries if e is not None}


def _score(*paths: Path, judge: Any = "installed") -> tuple[BfclScore, Any]:
    results = load_checked(paths, transcripts=1)  # as `evalkit report` reads: rows without transcripts
    data = with_bfcl_score(build_report(results, include_power=False, max_failed_transcripts=1), results, judge)
    assert data.bfcl_score is not None
    return data.bfcl_score, data


def test_every_category_of_the_file_with_evalkits_accuracy() -> None:
    """Without BFCL's checker (None: as when bfcl-eval is missing) evalkit's column is still shown."""
    score, data = _score(SINGLE_TURN, MULTI_TURN, judge=None)
    raw = _raw_runs(SINGLE_TURN, MULTI_TURN)
    expected: Counter[tuple[str, str, str]] = Counter()
    for run in raw:
        key = (_label(run), _category(run["cell"]["scenario"]))
        counted = run["outcome"] not in ("infra_error", "unsupported")
        expected[(*key, "runs")] += 1
        expected[(*key, "counted")] += counted
        expected[(*key, "correct")] += counted and run["correct"]
    assert set(score.categories) == {_category(r["cell"]["scenario"]) for r in raw}
    assert {"simple_python", "irrelevance", "multi_turn_miss_param"} <= set(score.categories)
    entries = _entries(score)
    assert {(k[0], k[1]) for k in expected} == set(entries)
    for (label, category), e in entries.items():
        assert (e.runs, e.evalkit_counted, e.evalkit_correct) == tuple(
            expected[(label, category, k)] for k in ("runs", "counted", "correct")
        )
        assert e.bfcl_correct is None and e.disagree is None
    assert score.bfcl_missing == BFCL_MISSING
    html, markdown = render_html(data), render_markdown(data)
    assert 'id="bfcl-score"' in html and BFCL_MISSING.replace("'", "&#39;") in html
    assert "**BFCL score.**" in markdown and BFCL_MISSING in markdown
    assert "multi_turn_miss_param (evalkit / BFCL)" in markdown
    assert report_dict(data)["bfcl_score"]["bfcl_missing"] == BFCL_MISSING


def test_a_report_of_other_cases_has_no_bfcl_section() -> None:
    results = records.results(records.cell_runs(3, 5, scenario="greet-hi", family="casual_greeting"))
    data = with_bfcl_score(build_report(results, include_power=False), results)
    assert data.bfcl_score is None
    assert 'id="bfcl-score"' not in render_html(data)
    assert "BFCL score" not in render_markdown(data)
    assert "bfcl_score" not in report_dict(data)


def _bfcl_direct(run: dict[str, Any], category: str, cases: dict[str, Any]) -> bool:
    """BFCL's verdict on a single-turn run's final reply, decoded as BFCL's FC handlers decode it."""
    from evalkit.importers.bfcl import reference

    model = reference.MODEL  # the import above installed the stand-in model config BFCL's checker imports
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.utils import is_empty_output

    calls = [c for c in run["calls"][-1]["completion"]["tool_calls"] if c["name"] != "respond"]
    output = None if any(c["arguments"] is None for c in calls) else [{c["name"]: c["arguments"]} for c in calls]
    if category == "irrelevance":
        return output is None or bool(is_empty_output(output))
    case, answer = cases[run["cell"]["scenario"]]
    if output is None:
        return False
    checked = ast_checker(case["function"], output, answer["ground_truth"], Language.PYTHON, category, model)
    return bool(checked["valid"])


def test_bfcls_accuracy_is_its_own_checkers_verdict_on_the_final_reply() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    from evalkit.importers.bfcl.data import load_category

    score, _ = _score(GRAMMAR)
    cases = {}
    for category in ("simple_python", "irrelevance"):
        cases |= {"bfcl-" + c["id"].replace("_", "-"): (c, a) for c, a in load_category(category)}
    expected: Counter[tuple[str, str, str]] = Counter()
    for run in _raw_runs(GRAMMAR):
        if run["cell"]["backend"] != "smollm2" or run["outcome"] in ("infra_error", "unsupported"):
            continue
        key = (_label(run), _category(run["cell"]["scenario"]))
        verdict = _bfcl_direct(run, key[1], cases)
        expected[(*key, "judged")] += 1
        expected[(*key, "correct")] += verdict
        expected[(*key, "disagree")] += verdict != run["correct"]
    entries = _entries(score)
    assert {(k[0], k[1]) for k in expected} == {("smollm2 · smollm2 · prompt · grammar", c) for c in score.categories}
    for label, category, _ in expected:
        e = entries[(label, category)]
        assert (e.bfcl_judged, e.bfcl_correct, e.disagree) == tuple(
            expected[(label, category, k)] for k in ("judged", "correct", "disagree")
        )
    # the grammar's cut-off calls on irrelevance cases: evalkit fails them, BFCL reads "no call" (a pass)
    assert entries[("smollm2 · smollm2 · prompt · grammar", "irrelevance")].disagree
    assert score.bfcl_version


def _run(index: int, text: str, correct: bool, outcome: str = "final_answer") -> RunRecord:
    base = records.run(
        scenario="bfcl-irrelevance-11", family="relevance_detection", model="<script>x</script>", index=index
    )
    call = ModelCall(
        index=0, n_messages=1, tools=["get_closest_prime"], tool_choice=None, constraint=None,
        completion=Completion(text=text), decision="accept",
    )  # fmt: skip
    failure = None if correct else ("degenerate_output" if outcome == "final_answer" else None)
    return base.model_copy(
        update={
            "outcome": outcome,
            "correct": correct,
            "completed": correct,
            "failure": failure,
            "calls": [] if outcome == "infra_error" else [call],
            "messages": [Message(role="user", content="?"), Message(role="assistant", content=text, origin="model")],
        }
    )


def test_a_different_verdict_is_a_disagreement_and_unjudged_runs_are_counted_apart() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    runs = [
        _run(0, "<|im_end|><|im_start|>assistant<|im_end|>", correct=False),  # evalkit: degenerate; BFCL: no call
        _run(1, "No tool can do that.", correct=True),
        _run(2, "", correct=False, outcome="infra_error"),
    ]
    results = records.results(runs)
    data = with_bfcl_score(build_report(results, include_power=False), results)
    assert data.bfcl_score is not None
    ((entry,),) = [row.entries for row in data.bfcl_score.rows]
    assert entry is not None and entry.category == "irrelevance"
    assert (entry.runs, entry.evalkit_counted, entry.evalkit_correct) == (3, 2, 1)
    assert (entry.bfcl_judged, entry.bfcl_correct, entry.disagree) == (2, 2, 1)
    assert entry.not_judged == (("infra error", 1),)
    html = render_html(data)
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
    assert "1 disagree; 1 not judged by BFCL (1 infra error)" in html
    assert "1 disagree; 1 not judged by BFCL (1 infra error)" in render_markdown(data)


def test_the_report_command_shows_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(MULTI_TURN), "--format", "markdown", "-o", "-"]) == 0
    out = capsys.readouterr().out
    assert "**BFCL score.**" in out and "| smollm2 · smollm2 · prompt · grammar | 0% (0/20) / " in out


def _multi_turn_run(drop_last_turns_calls: bool = False, turns_kept: int | None = None) -> RunRecord:
    """A multi-turn run whose model makes, turn by turn, the scenario's reference calls."""
    from evalkit.chat import ToolCall
    from evalkit.scenario.model import load_scenarios

    (scenario,) = load_scenarios([ROOT / "scenarios/bfcl/multi_turn_miss_param/bfcl-multi-turn-miss-param-4.yaml"])
    messages = []
    turns = scenario.turns[:turns_kept]
    for t, turn in enumerate(turns):
        messages.append(Message(role="user", content=turn.user))
        calls = [ToolCall(id=f"c{t}{i}", name=c.name, arguments=c.arguments) for i, c in enumerate(turn.reference)]
        if calls and not (drop_last_turns_calls and t == len(turns) - 1):
            messages.append(Message(role="assistant", tool_calls=calls, origin="model"))
        messages.append(Message(role="assistant", content="Done.", origin="model"))
    base = records.run(scenario=scenario.id, family="data_gap_recovery", index=0)
    return base.model_copy(update={"messages": messages})


def test_bfcls_multi_turn_checker_judges_the_transcript_turn_by_turn() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    pytest.importorskip("mpmath", reason=needs_extra("bfcl"))
    from evalkit.importers.bfcl.score import CheckerJudge

    judge = CheckerJudge()
    assert judge("multi_turn_miss_param", _multi_turn_run()) is True
    assert judge("multi_turn_miss_param", _multi_turn_run(drop_last_turns_calls=True)) is False
    assert judge("multi_turn_miss_param", _multi_turn_run(turns_kept=2)) is False  # BFCL: force-terminated
