"""`evalkit export inspect`: the logs it writes load with inspect_ai's own reader, one sample per
run, each with its transcript, its score, its metadata and, for simulated runs, the SIMULATED label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

inspect_log = pytest.importorskip("inspect_ai.log", reason=needs_extra("inspect"))

from evalkit.chat import Message, ToolCall, Usage  # noqa: E402
from evalkit.cli import main  # noqa: E402
from evalkit.results.reader import load_results  # noqa: E402
from evalkit.results.records import CheckItem, RunRecord  # noqa: E402
from tests.report import records  # noqa: E402

TRANSCRIPT = [
    Message(role="system", content="You are a pharmacy assistant."),
    Message(role="user", content="Is <script>alert(1)</script> in stock?"),
    Message(role="assistant", tool_calls=[ToolCall(id="c1", name="stock", arguments={"item": "x"})], origin="model"),
    Message(role="tool", content='{"count": 3}', tool_call_id="c1", name="stock", origin="mock"),
    Message(role="assistant", content="Three left.", origin="model"),
]


def _runs(simulated: bool) -> list[RunRecord]:
    runs = []
    for strategy in ("trust_text", "retry_nudge"):
        for i in range(5 if strategy == "trust_text" else 4):
            run = records.run(
                index=i, strategy=strategy, completed=i != 1, simulated=simulated, messages=TRANSCRIPT, retries=i % 2
            )
            runs.append(run.model_copy(update={"usage": Usage(prompt_tokens=100 + i, completion_tokens=10 + i)}))
    runs.append(
        records.run(index=4, strategy="retry_nudge", outcome="infra_error", error="server down", simulated=simulated)
    )
    return runs


@pytest.mark.parametrize("simulated", [True, False])
def test_inspects_reader_loads_one_sample_per_run(tmp_path: Path, simulated: bool) -> None:
    source = records.write_results(tmp_path / "r.jsonl", _runs(simulated), simulated=simulated, runs_per_cell=5)
    out = tmp_path / "logs"
    assert main(["export", "inspect", str(source), "-o", str(out)]) == 0
    runs = load_results([source]).runs
    logs = {p.name: inspect_log.read_eval_log(str(p)) for p in sorted(out.glob("*.eval"))}
    assert len(logs) == 2  # one per column
    samples = {}
    for log in logs.values():
        assert log.status == "success" and log.samples is not None
        assert log.eval.viewer is not None and log.eval.viewer.trust_content is False  # model output: plain text
        assert log.eval.task.startswith("test · sim · m · native · ")
        assert log.eval.task.endswith(" [SIMULATED]") is simulated and ("SIMULATED" in log.eval.tags) is simulated
        strategy = log.eval.task_args["strategy"]
        column = [r for r in runs if r.cell.strategy == strategy]
        assert len(log.samples) == len(column)
        counted = [r for r in column if r.counted]
        (correct,) = [s for s in log.results.scores if s.name == "correct"]
        assert correct.metrics["accuracy"].value == pytest.approx(sum(r.correct for r in counted) / len(counted))
        samples.update({(strategy, s.epoch - 1): s for s in log.samples})
    assert len(samples) == len(runs)
    # distinct task ids: `inspect view` shows one log of those sharing one (it takes them for retries)
    assert len({log.eval.task_id for log in logs.values()}) == len(logs) and all(
        log.eval.task_id for log in logs.values()
    )
    for run in runs:
        sample = samples[(run.cell.strategy, run.index)]
        assert sample.id == run.cell.scenario  # a plain name is its own id
        assert sample.metadata["run_id"] == run.run_id and sample.metadata["outcome"] == run.outcome
        assert (sample.metadata.get("label") == "SIMULATED") is run.simulated
        (usage,) = sample.model_usage.values()
        assert (usage.input_tokens, usage.output_tokens) == (run.usage.prompt_tokens, run.usage.completion_tokens)
        assert [m.role for m in sample.messages] == [m.role for m in run.messages]
        assert [m.text for m in sample.messages] == [m.content for m in run.messages]
        theirs = [m for m in sample.messages if m.role == "assistant"]
        calls = [(c.id, c.function, c.arguments) for m in theirs for c in m.tool_calls or []]
        # a call without an id (a text-parsed one) gets its place in the message as one
        ours = [(i, c) for m in run.messages for i, c in enumerate(m.tool_calls)]
        expected = [(c.id or f"call_{i}", c.name, c.arguments) for i, c in ours]
        assert calls == expected
        assert [m.metadata["origin"] for m in sample.messages] == [m.origin for m in run.messages]
        if run.counted:
            assert sample.scores["correct"].value == ("C" if run.correct else "I")
            assert sample.scores["correct"].explanation == (run.failure or "correct")
            assert sample.error is None
        else:
            assert sample.scores == {} and sample.error is not None and sample.error.message == "server down"


def test_a_file_where_the_folder_should_be_fails_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "logs"
    blocker.write_text("not a folder", encoding="utf-8")
    assert main(["export", "inspect", str(tmp_path / "missing.jsonl"), "-o", str(blocker)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "-o" in err and "not a directory" in err


def _check(*labels: str) -> list[CheckItem]:
    return [CheckItem(item=label, passed=True, structural=True, kind="reply") for label in labels]


def test_a_column_with_no_counted_run_shows_no_score(tmp_path: Path) -> None:
    runs = [records.run(index=i, strategy="down", outcome="infra_error", error="server down") for i in range(3)]
    runs += [records.run(index=i, strategy="up") for i in range(3)]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=3)
    assert main(["export", "inspect", str(source), "-o", str(tmp_path / "logs")]) == 0
    logs = {log.eval.task_args["strategy"]: log for log in map(_read, (tmp_path / "logs").glob("*.eval"))}
    assert logs["down"].results is not None and logs["down"].results.scores == []  # no 0.0 for nothing counted
    (correct,) = [s for s in logs["up"].results.scores if s.name == "correct"]
    assert correct.metrics["accuracy"].value == 1.0


def _read(path: Path) -> Any:
    return inspect_log.read_eval_log(str(path))


def test_each_column_names_its_own_task(tmp_path: Path) -> None:
    runs = [
        records.run(index=0, backend=b, model=m, mode=mode, strategy=s, simulated=True)
        for b, m in (("sim", "m"), ("llama", "smollm2"))
        for mode in ("native", "prompt")
        for s in ("trust_text", "retry_nudge")
    ]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=1, simulated=True)
    assert main(["export", "inspect", str(source), "-o", str(tmp_path / "logs")]) == 0
    logs = [_read(p) for p in (tmp_path / "logs").glob("*.eval")]
    assert len(logs) == 8 and len({log.eval.task for log in logs}) == 8
    for log in logs:
        args = log.eval.task_args
        assert args["strategy"] in log.eval.task and args["mode"] in log.eval.task
        assert log.eval.task.startswith("test") and log.eval.task.endswith("[SIMULATED]")


def test_answer_and_target_are_filled(tmp_path: Path) -> None:
    reply = records.run(index=0, completed=False, messages=TRANSCRIPT)
    reply = reply.model_copy(update={"check": _check("gave a final reply", "reply mentions 'three'")})
    call = [
        Message(role="user", content="Book it."),
        Message(role="assistant", content="Booking.", tool_calls=[ToolCall(name="book", arguments={"day": "Mon"})]),
    ]
    terminal = records.run(index=1, completed=True, messages=call)
    terminal = terminal.model_copy(update={"check": _check("called book", "book's arguments match")})
    source = records.write_results(tmp_path / "r.jsonl", [reply, terminal], runs_per_cell=2)
    assert main(["export", "inspect", str(source), "-o", str(tmp_path / "logs")]) == 0
    (log,) = [_read(p) for p in (tmp_path / "logs").glob("*.eval")]
    samples = {s.epoch - 1: s for s in log.samples}
    assert samples[0].scores["correct"].answer == "Three left."
    assert samples[1].scores["correct"].answer == 'book({"day": "Mon"})'
    assert samples[1].scores["completed"].answer == 'book({"day": "Mon"})'
    assert samples[0].target == ["gave a final reply", "reply mentions 'three'"]
    assert samples[1].target == ["called book", "book's arguments match"]
    summaries = {s.epoch - 1: s for s in inspect_log.read_eval_log_sample_summaries(log.location)}
    assert summaries[1].target == samples[1].target  # the viewer's sample list reads the summaries
