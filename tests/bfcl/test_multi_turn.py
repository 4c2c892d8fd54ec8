"""Imported BFCL multi_turn_miss_param scenarios: per-turn checks on BFCL's stateful backends catch a
model that acts before the user supplies the missing datum, and pass one that asks and waits."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
pytest.importorskip("mpmath", reason=needs_extra("bfcl"))

from evalkit.backends.base import RetryPolicy
from evalkit.chat import Completion, Sampling, ToolCall
from evalkit.cli import main
from evalkit.importers.bfcl.convert import convert_case
from evalkit.importers.bfcl.data import load_category
from evalkit.judge.verdict import judge_run
from evalkit.run.loop import run_loop
from evalkit.scenario.model import Scenario
from evalkit.strategies import build_stack
from tests.fakes import ScriptedBackend, text

CASE = "multi_turn_miss_param_1"  # ls / cd+mv / cd+grep / (which lines?) / tail(lines=20)


def _scenario() -> Scenario:
    case, answer = next((c, a) for c, a in load_category("multi_turn_miss_param") if c["id"] == CASE)
    conversion = convert_case("multi_turn_miss_param", case, answer)
    assert conversion.scenario is not None
    return Scenario.model_validate(conversion.scenario)


def _reply(calls: list[Any]) -> Completion:
    made = [ToolCall(id=f"m{i}", name=c.name, arguments=c.arguments) for i, c in enumerate(calls)]
    return Completion(tool_calls=made, finish_reason="tool_calls")


def _run(scenario: Scenario, script: list[Completion]) -> Any:
    backend = ScriptedBackend(list(script))
    policy = RetryPolicy(attempts=1, base_delay_s=0, max_delay_s=0)
    loop = run_loop(
        scenario,
        build_stack([("trust_text", {})]),
        backend,
        mode="native",
        sampling=Sampling(seed=1),
        run_id="r",
        seed=1,
        policy=policy,
    )
    state, view = asyncio.run(loop)
    return judge_run(scenario, state.outcome, view.executed, state.reply, turn_replies=state.turn_replies)


def test_the_missing_datum_turn_expects_no_call() -> None:
    scenario = _scenario()
    missing = [i for i, t in enumerate(scenario.turns) if t.check and t.check.no_tool_calls]
    assert missing == [3] and not scenario.turns[3].reference
    assert scenario.state and scenario.state[0].cls.endswith(":GorillaFileSystem")


def test_a_model_that_asks_and_waits_passes() -> None:
    scenario = _scenario()
    script: list[Completion] = []
    for turn in scenario.turns:
        if turn.reference:
            script += [_reply(turn.reference), text("Done.")]
        else:
            script.append(text("How many lines should I show?"))
    verdict = _run(scenario, script)
    assert verdict.correct, [i for i in verdict.items if not i.passed]


def test_a_model_that_acts_before_the_datum_fails_that_turn() -> None:
    scenario = _scenario()
    guessed = [c.model_copy(update={"arguments": {**c.arguments, "lines": 10}}) for c in scenario.turns[4].reference]
    script: list[Completion] = []
    for index, turn in enumerate(scenario.turns):
        reference = guessed if index == 3 else turn.reference  # guesses the datum, then redoes it when told
        script += [_reply(reference), text("Done.")]
    verdict = _run(scenario, script)
    failed = [i.item for i in verdict.items if not i.passed]
    assert not verdict.correct and failed == ["turn 4: no tool calls"]
    assert verdict.failure == "unneeded_tool_call"


def test_a_different_path_to_the_same_state_passes() -> None:
    """State-based acceptance: `cd` into the folder and back before the reference's calls changes nothing."""
    scenario = _scenario()
    script: list[Completion] = []
    for index, turn in enumerate(scenario.turns):
        extra = [ToolCall(id="x", name="pwd", arguments={})] if index == 0 else []
        if turn.reference:
            script += [_reply([*extra, *turn.reference]), text("Done.")]
        else:
            script.append(text("How many lines?"))
    assert _run(scenario, script).correct


def test_simulated_model_acting_on_its_skill_is_caught(tmp_path: Path) -> None:
    """SIMULATED: the simulated model follows its reference in one go, acting before the datum arrives."""
    out_dir = tmp_path / "s"
    assert (
        main(
            [
                "import",
                "bfcl",
                "--categories",
                "multi_turn_miss_param",
                "--sample",
                "5",
                "--seed",
                "1",
                "-o",
                str(out_dir),
            ]
        )
        == 0
    )
    config = tmp_path / "c.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "mt",
                "seed": 1,
                "runs": 3,
                "families": ["data_gap_recovery"],
                "modes": ["native"],
                "scenarios": [str(out_dir / "*/*.yaml")],
                "backends": [{"label": "sim", "kind": "sim", "model": "strong"}],
                "strategies": {"trust_text": ["trust_text"]},
            }
        )
    )
    results = tmp_path / "r.jsonl"
    assert main(["run", str(config), "-o", str(results)]) == 0
    runs = [r for r in map(json.loads, results.read_text().splitlines()) if r.get("type") == "run"]
    assert len(runs) == 15
    wrong = [r for r in runs if not r["correct"]]
    assert len(wrong) >= 10
    assert all(any(i["item"].startswith("turn ") and not i["passed"] for i in r["check"]) for r in wrong)


REAL_RESULTS = Path(__file__).resolve().parents[2] / "results/bfcl-miss-param.jsonl"


def _calls_per_turn(messages: list[Any]) -> dict[int, list[str]]:
    """The tools called (not `respond`) during each user turn, numbered from 1 as the check items are."""
    turn, made = 0, {}
    for message in messages:
        if message.role == "user" and message.origin == "scenario":
            turn += 1
        elif message.role == "assistant":
            made.setdefault(turn, []).extend(c.name for c in message.tool_calls if c.name != "respond")
    return made


def test_real_runs_that_act_before_the_datum_arrives_are_caught(tmp_path: Path) -> None:
    """REAL: SmolLM2's committed runs (configs/bfcl-miss-param.yaml), re-judged by today's loop and checker.
    Which turn a call was made in is read from the transcript, apart from the checker's own items."""
    from evalkit.results.reader import load_results
    from evalkit.run.rescore import rescore_results
    from evalkit.scenario.model import load_scenarios

    scenarios = {
        s.id: s
        for s in load_scenarios(sorted(REAL_RESULTS.parents[1].glob("scenarios/bfcl/multi_turn_miss_param/*.yaml")))
    }
    rescored = tmp_path / "rescored.jsonl"
    rescore_results(REAL_RESULTS, rescored, list(scenarios.values()))
    stored = load_results([REAL_RESULTS])
    runs = load_results([rescored]).runs
    assert not any(run.simulated for run in stored.runs) and len(runs) == len(stored.runs) == 20
    assert {r.run_id: r.correct for r in runs} == {r.run_id: r.correct for r in stored.runs}
    acted_early = 0
    for run in runs:
        turns = scenarios[run.cell.scenario].turns
        gaps = [i + 1 for i, turn in enumerate(turns) if turn.check is not None and turn.check.no_tool_calls]
        assert gaps, run.cell.scenario
        made = _calls_per_turn(run.messages)
        for gap in gaps:
            failed = {i.item for i in run.check if not i.passed}
            assert (f"turn {gap}: no tool calls" in failed) == bool(made.get(gap)), (run.run_id, made)
        if any(made.get(gap) for gap in gaps):
            acted_early += 1
            assert not run.correct, run.run_id
    assert acted_early >= 1  # the real model does act on a guess, and every such run fails


def _bfcl_valid(turn_calls: list[list[ToolCall]], tag: str) -> bool:
    """BFCL's own multi-turn checker on the same calls, one step per turn (call strings, as it decodes them)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    case, answer = next((c, a) for c, a in load_category("multi_turn_miss_param") if c["id"] == CASE)
    decoded = [
        [[f"{c.name}({', '.join(f'{k}={v!r}' for k, v in (c.arguments or {}).items())})" for c in calls]]
        if calls
        else []
        for calls in turn_calls
    ]
    return bool(
        multi_turn_checker(decoded, answer["ground_truth"], case, "multi_turn_miss_param", f"evalkit-test-{tag}")[
            "valid"
        ]
    )


@pytest.mark.parametrize(
    "behaviour",
    [
        "follows the reference",
        "skips the turn that only reads",
        "lists the folder after a pwd",
        "reads something else (pwd)",
    ],
)
def test_evalkit_and_bfcl_agree_on_a_multi_turn_case(behaviour: str) -> None:
    """`ls` changes no state, so the state check alone passed a model that did nothing on turn 1; BFCL's
    response checker requires the reference's results among the model's, and so does evalkit now."""
    scenario = _scenario()
    assert [c.name for c in scenario.turns[0].reference] == ["ls"]
    turn_calls: list[list[ToolCall]] = []
    for index, turn in enumerate(scenario.turns):
        calls = [ToolCall(id=f"t{index}-{i}", name=c.name, arguments=c.arguments) for i, c in enumerate(turn.reference)]
        if index == 0 and behaviour == "skips the turn that only reads":
            calls = []
        elif index == 0 and behaviour == "lists the folder after a pwd":
            calls = [ToolCall(id="p", name="pwd", arguments={}), *calls]
        elif index == 0 and behaviour == "reads something else (pwd)":
            calls = [ToolCall(id="p", name="pwd", arguments={})]
        turn_calls.append(calls)
    script: list[Completion] = []
    for calls in turn_calls:
        script += [_reply(calls), text("Done.")] if calls else [text("How many lines should I show?")]
    verdict = _run(scenario, script)
    assert verdict.correct == _bfcl_valid(turn_calls, re.sub(r"\W+", "-", behaviour))
    expected = behaviour in ("follows the reference", "lists the folder after a pwd")
    assert verdict.correct is expected, [i for i in verdict.items if not i.passed]
    if behaviour == "skips the turn that only reads":
        assert [i.item for i in verdict.items if not i.passed] == ["turn 1: state: results include the reference's"]
        assert verdict.failure == "wrong_arguments"
