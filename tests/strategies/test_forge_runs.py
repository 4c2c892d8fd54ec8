"""The `forge` strategy end to end: configs/forge-inproc.yaml on the simulated backend (Python >= 3.12
with forge-guardrails), and the one-line refusal everywhere else."""

from __future__ import annotations

from collections import Counter
from importlib.metadata import version
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from evalkit.strategies.forge import forge_unavailable

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs/forge-inproc.yaml"
MISSING = forge_unavailable()
needs_forge = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def test_list_strategies_names_forge_and_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "strategies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(i for i, text in enumerate(lines) if text.split()[:1] == ["forge"])
    assert "needs Python >= 3.12 and forge-guardrails" in lines[line]
    assert "max_retries=3" in lines[line + 1] and "respond_tool=False" in lines[line + 1]


@pytest.mark.skipif(MISSING is None, reason="forge-guardrails is installed in this Python")
def test_without_forge_a_config_fails_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["run", str(CONFIG), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{CONFIG}: strategies.forge: {MISSING}" in err
    assert not out.exists()


@pytest.fixture(scope="module")
def forge_runs(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    config = load_config(CONFIG).model_copy(update={"runs": 4})
    return load_results([run_config(config, tmp_path_factory.mktemp("forge") / "r.jsonl")])


@needs_forge
def test_the_header_names_the_forge_it_ran(forge_runs) -> None:  # type: ignore[no-untyped-def]
    guards = forge_runs.headers[0].guards["forge"]
    assert guards["package"] == "forge-guardrails" and guards["version"] == version("forge-guardrails")


@needs_forge
def test_forge_without_its_respond_tool_cannot_end_a_turn_in_text(forge_runs) -> None:  # type: ignore[no-untyped-def]
    """Forge has no chat turn: every text reply is a bad response, so a greeting never passes; it ends
    guard_fatal (text until the budget is spent) or loops through tool calls to the iteration limit."""
    greetings = [r for r in forge_runs.runs if r.cell.family == "casual_greeting"]
    plain = [r for r in greetings if r.cell.strategy in ("forge", "forge-no-nudge", "forge-no-rescue")]
    assert plain and not any(r.correct for r in plain)
    assert {r.outcome for r in plain} <= {"guard_fatal", "iteration_limit"}
    assert "guard_fatal" in {r.failure for r in plain}
    with_respond = [r for r in greetings if r.cell.strategy == "forge-respond"]
    assert sum(r.correct for r in with_respond) > len(with_respond) / 2


@needs_forge
def test_forge_with_no_retries_ends_at_the_first_text_or_unknown_tool(forge_runs) -> None:  # type: ignore[no-untyped-def]
    """max_retries bounds text and unknown tools only: malformed arguments (max_tool_errors) and a
    skipped step (max_premature_attempts) keep their own budgets."""
    runs = [r for r in forge_runs.runs if r.cell.strategy == "forge-no-nudge"]
    reasons = {i.reason for r in runs for i in r.interventions}
    assert not reasons & {"forge retry (retry)", "forge tool_error (unknown_tool)"}
    assert "forge fatal: too many consecutive bad responses" in reasons


@needs_forge
def test_every_forge_intervention_is_one_of_its_actions(forge_runs) -> None:  # type: ignore[no-untyped-def]
    interventions = [i for r in forge_runs.runs if r.cell.strategy.startswith("forge") for i in r.interventions]
    # the shipped profile writes some calls as text (`call_as_text`): Forge reads them back, a rescue
    rescues = [i for i in interventions if i.action == "rescue"]
    assert rescues and all(i.reason.startswith("forge rescued ") and " from text" in i.reason for i in rescues)
    reasons = Counter(i.reason.split(" (")[0] for i in interventions if i.action != "rescue")
    assert set(reasons) <= {
        "forge retry",
        "forge tool_error",
        "forge step_blocked",
        "forge fatal: too many consecutive bad responses",
        "forge fatal: too many consecutive tool-argument errors",
        "forge fatal: model repeatedly skipped required steps",
        "dropped respond beside real calls",
    }
    assert reasons["forge retry"] > 0
