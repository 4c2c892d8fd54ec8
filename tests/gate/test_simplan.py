"""`evalkit plan --profile`: the gate's power and the runs it needs, by simulation from a profile."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalkit.backends.sim_profile import SimProfile
from evalkit.cli import main
from evalkit.gate.simplan import simulate_plan, simulate_rates
from evalkit.results.integrity import load_checked
from evalkit.scenario.model import load_scenarios
from tests.simfit.conftest import KNOWN, SCENARIOS, simulated_results

STACKS = {"trust_text": ["trust_text"], "retry_nudge": ["retry_nudge"]}
HI = "s/native/trust_text/greet-hi"  # the greeting: KNOWN answers it right about 70% of the time


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny baseline (2 scenarios x 2 stacks, 5 runs each) run on the simulated backend; its
    header records the stacks and sampling."""
    return simulated_results(tmp_path_factory.mktemp("base"), KNOWN, runs=5)


def test_the_simulated_power_rises_with_the_runs(baseline: Path) -> None:
    results = load_checked([baseline], transcripts=0)
    scenarios = {s.id: s for s in load_scenarios(SCENARIOS)}
    config = {"strategies": STACKS}
    profile = SimProfile.model_validate(KNOWN)
    rates = simulate_rates(results, profile, scenarios, config, experiments=4, sim_runs=5, seed=1)
    assert rates.rates.shape == (4, 4) and rates.cells == 4
    powers = []
    for runs in (10, 40, 160):
        plan = simulate_plan(rates, 0.3, {HI: runs})
        assert len(plan.cells) == 4 and not plan.left_out
        cell = plan.cells[HI]
        assert cell.power is not None and cell.runs is not None and 0.3 < cell.rate <= 1.0
        powers.append(cell.power)
        assert plan.every_caught == pytest.approx(cell.power)  # one cell planned: the gate's chance is its own
    assert powers[0] < powers[1] < powers[2] and powers[2] > 0.8
    # the runs found for 80% sit between the planned runs that fall short and those that reach it
    needed = plan.cells[HI].runs
    assert needed is not None and 10 < needed < 160


def test_plan_prints_the_simulated_figure(baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "known.yaml"
    profile.write_text(yaml.safe_dump(KNOWN))
    args = ["plan", str(baseline), "--drop", "0.3", "--profile", str(profile), "--experiments", "3", "--sim-runs", "4"]
    assert main([*args, "--scenarios", *map(str, SCENARIOS)]) == 0
    out = capsys.readouterr().out
    by = f"by simulation from {profile} (SIMULATED)"
    hi = out.split(f"  {HI}: ", 1)[1].splitlines()
    assert hi[1].startswith(f"    {by}: simulated rate ") and "80% at about " in hi[1]
    assert f"{by}: 3 experiments (posterior draws), 4 simulated runs per cell and draw; 4 cells simulated" in out
    # the same from a run config instead of the baseline's header
    config = tmp_path / "tiny.yaml"
    backends = [{"label": "s", "kind": "sim", "model": str(profile)}]
    scenarios = [str(s) for s in SCENARIOS]
    config.write_text(yaml.safe_dump({"name": "t", "scenarios": scenarios, "backends": backends, "strategies": STACKS}))
    assert main([*args, "--config", str(config)]) == 0
    assert "4 cells simulated" in capsys.readouterr().out


@pytest.mark.parametrize("profile", ["no-such-profile", "fitted/nope", "missing.yaml"])
def test_a_missing_profile_is_a_one_line_input_error(
    baseline: Path, profile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if profile.endswith(".yaml"):
        profile = str(tmp_path / profile)
    assert main(["plan", str(baseline), "--profile", profile]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalkit: error: ") and len(err.strip().splitlines()) == 1


def test_no_experiment_is_an_input_error(baseline: Path) -> None:
    args = ["plan", str(baseline), "--profile", "small-local", "--experiments", "0"]
    assert main([*args, "--scenarios", *map(str, SCENARIOS)]) == 2
