"""The fit classifies each call with the scenario's checker and recovers a known profile."""

from __future__ import annotations

from pathlib import Path

from evalkit.chat import ToolCall
from evalkit.scenario.model import Scenario
from evalkit.simfit.classify import classify_files, fits_intended
from evalkit.simfit.fit import TOOL_BEHAVIOURS, fit_profile
from tests.simfit.conftest import KNOWN


def test_simulated_runs_are_left_out_unless_asked(known_results: Path, scenarios: list[Scenario]) -> None:
    assert classify_files([known_results], "known.yaml", scenarios).observations == []


def test_the_fit_recovers_the_profile_that_made_the_runs(known_results: Path, scenarios: list[Scenario]) -> None:
    model = str(known_results.parent / "known.yaml")
    found = classify_files([known_results], model, scenarios, simulated=True)
    assert found.runs == 160 and found.skipped == 0
    fitted = fit_profile(found)
    assert fitted.fitted is not None
    estimates = fitted.fitted.estimates
    truth = {f"tool_step.{b}": KNOWN["tool_step"][b] for b in TOOL_BEHAVIOURS}
    truth |= {"after_nudge.tool_step_correct": 0.7, "reply_step.unneeded_tool_call": 0.3}
    for name, value in truth.items():
        e = estimates[name]
        assert e.calls > 30, name
        if value == 0:
            assert e.count == 0, name  # the Jeffreys interval never reaches 0 itself
        else:
            assert e.low <= value <= e.high, (name, e)
    assert fitted.fitted.sources[0].file == "known.jsonl" and len(fitted.fitted.sources[0].sha256) == 64


def test_a_call_is_intended_when_the_check_accepts_it(scenarios: list[Scenario]) -> None:
    trip = next(s for s in scenarios if s.id == "seq-weather-trip")
    target = trip.skill().calls[2]  # suggest_activity {weather: rain}; the check wants {$contains: rain}
    assert fits_intended(trip, target, ToolCall(id="1", name="suggest_activity", arguments={"weather": "light rain"}))
    assert not fits_intended(trip, target, ToolCall(id="1", name="suggest_activity", arguments={"weather": "sun"}))
    summary = trip.skill().calls[3]  # the terminal tool: no check entry, the reference's values decide
    assert not fits_intended(trip, summary, ToolCall(id="1", name="send_summary", arguments={"text": "x"}))


def test_runs_of_unknown_scenarios_are_counted_and_noted(known_results: Path, scenarios: list[Scenario]) -> None:
    model = str(known_results.parent / "known.yaml")
    only_trip = [s for s in scenarios if s.id == "seq-weather-trip"]
    found = classify_files([known_results], model, only_trip, simulated=True)
    assert found.unknown == 80 and found.runs == 80
    notes = fit_profile(found).fitted.notes  # type: ignore[union-attr]
    assert "80 runs of scenarios not among those given were left out" in notes
