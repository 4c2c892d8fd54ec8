"""Records carry a hash of the scenario they were judged against: a resume never mixes the runs of
two versions of a scenario, and a report or gate warns about a file that does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.integrity import check_integrity, load_checked, scenario_drift
from evalkit.results.reader import load_results
from evalkit.run.rescore import rescore_results
from evalkit.run.runner import run_config
from evalkit.scenario.model import load_scenarios
from tests.run.test_runner import config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    """The two families' scenarios, copied where a test may edit them."""
    folder = tmp_path / "scenarios"
    for family in ("casual_greeting", "sequential_reasoning"):
        shutil.copytree(ROOT / "scenarios" / family, folder / family)
    return folder


def _config(folder: Path, runs: int = 2):  # type: ignore[no-untyped-def]
    return config(scenarios=[str(folder / "*" / "*.yaml")], runs=runs)


def _edit_hi(folder: Path) -> None:
    hi = folder / "casual_greeting" / "hi.yaml"
    text = hi.read_text()
    hi.write_text(text.replace("reply: {}", "reply: {contains: [zebra]}"))
    assert hi.read_text() != text


def test_records_carry_the_scenario_hash_and_a_description_edit_keeps_it(scenarios):
    out = run_config(_config(scenarios), scenarios.parent / "r.jsonl")
    hashes = {
        r.cell.scenario: {x.scenario_hash for x in load_results([out]).runs if x.cell.scenario == r.cell.scenario}
        for r in load_results([out]).runs
    }
    assert all(len(h) == 1 and None not in h for h in hashes.values())
    assert len({next(iter(h)) for h in hashes.values()}) == len(hashes)  # one hash per scenario
    hi = scenarios / "casual_greeting" / "hi.yaml"
    hi.write_text(hi.read_text().replace("description: The user", "description: Someone"))
    run_config(_config(scenarios, runs=3), out, resume=True)  # documentation is not what is judged


def test_resume_refuses_a_scenario_edited_since_its_runs(scenarios):
    # before: the resume ran the third run of each cell against the new version and counted all three together
    out = run_config(_config(scenarios), scenarios.parent / "r.jsonl")
    before = out.read_bytes()
    _edit_hi(scenarios)
    with pytest.raises(ResultsError, match="greet-hi") as caught:
        run_config(_config(scenarios, runs=3), out, resume=True)
    assert "changed" in str(caught.value) and "rescore" in str(caught.value)
    assert out.read_bytes() == before
    # re-judging the stored outputs against the new version makes the file resumable again
    rescore_results(out, out, load_scenarios(sorted(scenarios.rglob("*.yaml"))))
    run_config(_config(scenarios, runs=3), out, resume=True)
    assert len(load_results([out]).runs) == 8 * 2 * 3


def test_records_without_a_hash_still_load_and_resume(scenarios):
    out = run_config(_config(scenarios), scenarios.parent / "r.jsonl")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for record in lines:
        record.pop("scenario_hash", None)  # a file written before records carried it
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert all(r.scenario_hash is None for r in load_results([out]).runs)
    run_config(_config(scenarios, runs=3), out, resume=True)
    assert len(load_results([out]).runs) == 8 * 2 * 3


def test_report_warns_about_runs_of_two_versions_of_a_scenario(scenarios):
    out = run_config(_config(scenarios), scenarios.parent / "r.jsonl")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    changed = next(r for r in lines if r.get("type") == "run" and r["cell"]["scenario"] == "greet-hi")
    changed["scenario_hash"] = "0" * 16  # what an edit between two resumes of an older evalkit left
    out.write_text("".join(json.dumps(r) + "\n" for r in lines))
    warnings: list[str] = []
    load_checked([out], warn=warnings.append)
    assert any("greet-hi" in w and "2 versions" in w for w in warnings), warnings
    assert all(p.severity == "warning" for p in check_integrity(load_results([out])))


def test_gate_warns_when_baseline_and_candidate_judged_different_versions(scenarios, capsys):
    baseline = run_config(_config(scenarios), scenarios.parent / "base.jsonl")
    _edit_hi(scenarios)
    candidate = run_config(_config(scenarios), scenarios.parent / "cand.jsonl")
    assert scenario_drift(load_results([baseline]), load_results([baseline])) is None
    drift = scenario_drift(load_results([baseline]), load_results([candidate]))
    assert drift is not None and "greet-hi" in drift.message and "greet-thanks" not in drift.message
    main(["gate", "--baseline", str(baseline), "--candidate", str(candidate)])
    assert "greet-hi" in capsys.readouterr().err
