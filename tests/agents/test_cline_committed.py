"""The committed Cline greeting results (configs/cline-greeting.yaml; regenerate with `evalkit run
configs/cline-greeting.yaml`): yolo mode's greeting shows as runaway runs with their served-call count.

Issue 37 item 6. The file was made by the real Cline 3.0.65 against the simulated small model; this
test reads it only, so it runs without Cline.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.run.config import load_config

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "cline-greeting.yaml"
RESULTS = ROOT / "results" / "cline-greeting.jsonl"
NUDGE = "[SYSTEM] This run is not complete until you call one of these terminal completion tools: submit_and_exit"


def test_cline_yolo_mode_s_greeting_shows_as_runaway_runs_with_their_served_call_count() -> None:
    config = load_config(CONFIG)
    budget = config.agents["cline-yolo"].budget
    results = load_results([RESULTS])
    by_cell: dict[str, list[RunRecord]] = {}
    for run in results.runs:
        by_cell.setdefault(run.cell.strategy, []).append(run)
    assert {k: len(v) for k, v in by_cell.items()} == {"trust_text": 10, "cline-act": 10, "cline-yolo": 10}

    described = results.headers[-1].agents
    assert described["cline-yolo"]["mode"] == "yolo" and described["cline-act"]["mode"] == "act"
    assert described["cline-yolo"]["version"] == "3.0.65"
    assert described["cline-yolo"]["install_hash"].startswith("sha256:")

    for run in by_cell["cline-act"]:  # act mode: a text reply ends the run
        assert (run.outcome, run.correct, run.served.calls) == ("final_answer", True, 1)

    yolo = by_cell["cline-yolo"]
    runaway = [r for r in yolo if r.outcome == "runaway"]
    assert len(runaway) > len(yolo) / 2
    for run in runaway:  # ended by evalkit's budget, never by Cline: the count is the budget
        assert run.failure == "runaway" and not run.correct
        assert run.served.calls == run.model_calls == budget
        assert run.error == f"asked for more than its budget of {budget} served model calls"
        asked = [m.content for m in run.messages if m.role == "user"]
        assert asked[0] == "hi" and set(asked[1:]) == {next(a for a in asked if a.startswith(NUDGE))}
    for run in yolo:
        if run.outcome != "runaway":  # the rest: Cline's own mistake limit, after the model called its tools
            assert run.outcome == "failed" and "mistake limit (--retries 6)" in (run.error or "")
            assert not run.correct and run.served.calls < budget


def test_cline_s_transcripts_hold_placeholders_for_the_run_s_folder_and_the_date() -> None:
    runs = [r for r in load_results([RESULTS]).runs if r.cell.strategy.startswith("cline")]
    for run in runs:
        system = run.messages[0].content
        assert "Working Directory: {workdir}" in system and "Date: {date}" in system, run.run_id
