"""evalkit's checker (v2 checks in `bfcl` mode, as `evalkit import bfcl` writes them) gives the same
verdict as BFCL's own checker on every output of a fixed sample: each possible answer and each with one
controlled deviation. Deliberate differences are named in `evalkit.judge.arguments.DELIBERATE_DIFFERENCES`
and tested on their own below."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))

from evalkit.backends.packaged import MODELS
from evalkit.chat import Completion, ToolCall
from evalkit.importers.bfcl import import_bfcl
from evalkit.importers.bfcl.data import load_category
from evalkit.importers.bfcl.reference import bfcl_output, bfcl_verdict
from evalkit.importers.bfcl.schema import tool_name
from evalkit.judge.arguments import DELIBERATE_DIFFERENCES
from evalkit.judge.verdict import judge_run
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.run.rescore import rescore_results
from evalkit.scenario.mocks import execute_call
from evalkit.scenario.model import Scenario, load_scenarios

ROOT = Path(__file__).resolve().parent.parent.parent

CATEGORIES = ["simple_python", "multiple", "parallel", "irrelevance", "live_irrelevance"]
SAMPLE, SEED = 20, 2026
Output = list[dict[str, Any]]


def _sample() -> list[tuple[Scenario, str, dict[str, Any], dict[str, Any] | None]]:
    docs, report = import_bfcl(CATEGORIES, SAMPLE, SEED)
    assert not report.skipped and not report.approximated
    raw = {case["id"]: (cat, case, answer) for cat in CATEGORIES for case, answer in load_category(cat)}
    out = []
    for doc in docs:
        category, case, answer = raw[doc["provenance"]["id"]]
        out.append((Scenario.model_validate(doc), category, case, answer))
    return out


SAMPLE_CASES = _sample()


def evalkit_verdict(
    scenario: Scenario, output: Output | None, reply: str = "Sorry, none of my tools can do that."
) -> bool:
    """Judge the output as one reply: each call executed against the mocks, the run ended by it
    (`reply` is the text of a reply without calls)."""
    if output is None:  # a cut-off call: the arguments did not parse
        call = ToolCall(id="c0", name=scenario.tools[0].name, raw_arguments='{"x": ', parse_error="cut off")
        calls = [execute_call(scenario, call)]
    else:
        calls = [
            execute_call(scenario, ToolCall(id=f"c{i}", name=name, arguments=args))
            for i, entry in enumerate(output)
            for name, args in entry.items()
        ]
    return judge_run(scenario, "terminal_tool" if calls else "final_answer", calls, None if calls else reply).correct


def _given(alts: list[Any]) -> list[Any]:
    return [a for a in alts if a != ""]


def _answer(
    ground_truth: list[dict[str, Any]],
    pick: dict[tuple[int, str], Any] | None = None,
    omit: tuple[int, str] | None = None,
) -> Output:
    pick = pick or {}
    output: Output = []
    for i, entry in enumerate(ground_truth):
        ((name, params),) = entry.items()
        args = {p: pick.get((i, p), _given(alts)[0]) for p, alts in params.items() if _given(alts) and (i, p) != omit}
        output.append({tool_name(name): args})
    copied: Output = json.loads(json.dumps(output))
    return copied


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1000
    return "zz wrong zz" if not isinstance(value, list) else [*value, "zz wrong zz"]


def _deviate(base: Output, kind: str, ground_truth: list[dict[str, Any]]) -> Output | None:
    """`base` with one controlled deviation, or None when the case has nothing to deviate."""
    out = copy.deepcopy(base)
    slots = [(entry, name, param) for entry in out for name, args in entry.items() for param in args]
    for entry, name, param in slots:
        value = entry[name][param]
        if kind == "int_as_float" and isinstance(value, int) and not isinstance(value, bool):
            entry[name][param] = float(value)
            return out
        if kind == "int_as_string" and isinstance(value, int) and not isinstance(value, bool):
            entry[name][param] = str(value)
            return out
        if kind == "unnormalised_string" and isinstance(value, str) and value:
            entry[name][param] = " " + value.upper().replace(" ", " - ") + "."
            return out
        if kind == "lower_cased_list" and isinstance(value, list) and any(isinstance(v, str) for v in value):
            entry[name][param] = [v.lower() if isinstance(v, str) else v for v in value]
            return out
    if kind == "extra_argument":
        ((name, args),) = out[0].items()
        args["evalkit_extra"] = "x"
        return out
    if kind == "right_call_twice":
        return [*out, copy.deepcopy(out[0])]
    if kind == "wrong_optional":
        for i, entry in enumerate(ground_truth):
            ((name, params),) = entry.items()
            for param, alts in params.items():
                if "" in alts:
                    given = _given(alts)
                    out[i][tool_name(name)][param] = _wrong(given[0]) if given else "zz wrong zz"
                    return out
    return None


DEVIATIONS = [
    "int_as_float",
    "int_as_string",
    "extra_argument",
    "wrong_optional",
    "right_call_twice",
    "unnormalised_string",
    "lower_cased_list",
]


def outputs(category: str, case: dict[str, Any], answer: dict[str, Any] | None) -> Iterator[tuple[str, Output]]:
    if answer is None:  # irrelevance: no call, or a well-formed call of an offered tool
        yield "no call", []
        yield "a call", [{tool_name(case["function"][0]["name"]): {}}]
        return
    truth = answer["ground_truth"]
    base = _answer(truth)
    yield "answer", base
    for i, entry in enumerate(truth):
        ((_, params),) = entry.items()
        for param, alts in params.items():
            for k, alt in enumerate(_given(alts)[1:], start=1):
                yield f"answer {param}#{k}", _answer(truth, pick={(i, param): alt})
            if "" in alts and _given(alts):
                yield f"answer without {param}", _answer(truth, omit=(i, param))
    for kind in DEVIATIONS:
        deviated = _deviate(base, kind, truth)
        if deviated is not None:
            yield kind, deviated
    others = [f["name"] for f in case["function"] if f["name"] not in {next(iter(e)) for e in truth}]
    if others:
        ((_, args),) = base[0].items()
        yield "wrong function", [{tool_name(others[0]): args}, *base[1:]]


@pytest.mark.parametrize(("scenario", "category", "case", "answer"), SAMPLE_CASES, ids=[s.id for s, *_ in SAMPLE_CASES])
def test_same_verdict_as_bfcl(
    scenario: Scenario, category: str, case: dict[str, Any], answer: dict[str, Any] | None
) -> None:
    truth = answer["ground_truth"] if answer else None
    disagreements = []
    for label, output in outputs(category, case, answer):
        ours = evalkit_verdict(scenario, output)
        theirs = bfcl_verdict(category, case["function"], output, truth)
        if ours != theirs:
            disagreements.append(f"{label}: evalkit {ours}, BFCL {theirs}: {json.dumps(output)[:300]}")
    assert not disagreements, "\n".join(disagreements)


def test_sample_exercises_every_deviation() -> None:
    """The sample is big enough that each deviation, and both verdicts, occur (else the test proves little)."""
    seen: dict[str, set[bool]] = {}
    for _, category, case, answer in SAMPLE_CASES:
        truth = answer["ground_truth"] if answer else None
        for label, output in outputs(category, case, answer):
            kind = label.split(" ")[0] if label.startswith("answer") else label
            seen.setdefault(kind, set()).add(bfcl_verdict(category, case["function"], output, truth))
    assert set(DEVIATIONS) | {"answer", "no call", "a call", "wrong function"} <= set(seen)
    assert seen["answer"] == {True} and seen["extra_argument"] == {False} and seen["right_call_twice"] == {False}
    assert seen["int_as_string"] == {False}
    assert True in seen["unnormalised_string"] and True in seen["lower_cased_list"]


def test_rule_cut_off_call_is_malformed() -> None:
    """Named rule: on an irrelevance case BFCL counts an undecodable call as 'no call' (a pass); evalkit
    counts a call whose arguments do not parse as a malformed call (a failure)."""
    irrelevant = [(s, c, case) for s, c, case, _ in SAMPLE_CASES if "irrelevance" in c]
    assert irrelevant
    for scenario, category, case in irrelevant:
        assert bfcl_verdict(category, case["function"], None, None) is True
        assert evalkit_verdict(scenario, None) is False


# -- recorded real model outputs ------------------------------------------------------------------
# configs/bfcl-smollm2.yaml ran SmolLM2-135M-Instruct (real llama-server, native tool calls) on the
# committed single-turn sample with --record; it rarely calls a tool there, so SmolLM2's grammar runs
# of the model comparison (below) add real calls. Every such output is judged here by evalkit (its
# loop and checker, re-run on the stored completion by `evalkit rescore`) and by BFCL's checker.

REAL_RESULTS = ROOT / "results/bfcl-smollm2.jsonl"
REAL_RECORDINGS = ROOT / "recordings/bfcl-smollm2/smollm2/recordings.jsonl"
# SmolLM2's grammar-stack runs of the BFCL model comparison (prompt mode, configs/compare-models-bfcl-
# grammar.yaml): the grammar makes every reply a call, so these hold real arguments to match. Only runs
# of one model call: BFCL judges a single-turn case's first reply, and so must the run's verdict.
GRAMMAR_RESULTS = ROOT / "results/compare-models-bfcl-grammar.jsonl"
Rule = Callable[[RunRecord, "Output | None", str], bool]
# where a real output's verdicts may differ: the named rule that applies to it
REAL_OUTPUT_RULES: dict[str, Rule] = {
    "cut_off_call_is_malformed": lambda run, output, category: output is None and "irrelevance" in category,
    "degenerate_reply_fails": lambda run, output, category: run.failure == "degenerate_output",
}


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[RunRecord, Scenario]]:
    """The committed runs' records, re-judged by the current loop and checker."""
    scenarios = load_scenarios(sorted((ROOT / "scenarios/bfcl").glob("*/*.yaml")))
    by_id = {s.id: s for s in scenarios}
    out = []
    for source in (REAL_RESULTS, GRAMMAR_RESULTS):
        rescored = tmp_path_factory.mktemp("real") / "rescored.jsonl"
        rescore_results(source, rescored, scenarios)
        out += [
            (run, by_id[run.cell.scenario])
            for run in load_results([rescored]).runs
            if run.cell.backend == "smollm2" and run.model_calls == 1
        ]
    return out


def test_the_recordings_hold_the_real_runs_outputs(real_runs: list[tuple[RunRecord, Scenario]]) -> None:
    results = load_results([REAL_RESULTS])
    assert results.headers[0].backends["smollm2"]["model_sha256"] == MODELS["smollm2"].sha256
    assert not any(run.simulated for run in results.runs)
    recorded = {}
    for line in REAL_RECORDINGS.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        recorded[entry["run_id"], entry["call_index"]] = Completion.model_validate(entry["completion"])
    stored = {(run.run_id, call.index): call.completion for run in results.runs for call in run.calls}
    assert recorded == stored
    assert {run.run_id for run in results.runs} <= {run.run_id for run, _ in real_runs}


def test_real_outputs_get_the_same_verdict_as_bfcl(real_runs: list[tuple[RunRecord, Scenario]]) -> None:
    cases: dict[str, dict[str, tuple[dict[str, Any], dict[str, Any] | None]]] = {}
    unexplained: list[str] = []
    explained: list[str] = []
    for run, scenario in real_runs:
        assert scenario.provenance is not None
        category, case_id = scenario.provenance.category, scenario.provenance.id
        if category not in cases:
            cases[category] = {case["id"]: (case, answer) for case, answer in load_category(category)}
        case, answer = cases[category][case_id]
        output = bfcl_output(run.calls[0].completion)  # BFCL judges a single-turn case's first reply
        theirs = bfcl_verdict(category, case["function"], output, answer["ground_truth"] if answer else None)
        if run.correct == theirs:
            continue
        rules = [name for name, applies in REAL_OUTPUT_RULES.items() if applies(run, output, category)]
        line = f"{run.run_id}: evalkit {run.correct} ({run.failure}), BFCL {theirs}: {json.dumps(output)[:200]}"
        (explained if rules else unexplained).append(line)
    assert not unexplained, "\n".join(unexplained)
    assert len(explained) <= len(real_runs) // 10, "\n".join(explained)  # rules are exceptions, not the norm


def test_the_real_outputs_exercise_both_verdicts_and_calls(real_runs: list[tuple[RunRecord, Scenario]]) -> None:
    outputs = [bfcl_output(run.calls[0].completion) for run, _ in real_runs]
    assert sum(bool(output) for output in outputs) >= 10 and any(output == [] for output in outputs)
    verdicts = {run.correct for run, _ in real_runs}
    assert verdicts == {True, False}
    assert {s.provenance.category for _, s in real_runs if s.provenance} >= {"simple_python", "irrelevance"}
    assert set(REAL_OUTPUT_RULES) <= set(DELIBERATE_DIFFERENCES)
