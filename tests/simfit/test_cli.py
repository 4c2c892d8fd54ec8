"""`evalkit sim fit` and `evalkit sim check` on a committed real results file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.backends.sim_profile import load_profile
from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def at_root() -> Iterator[None]:
    before = os.getcwd()
    os.chdir(ROOT)  # scenarios/ and results/ as a user in the checkout has them
    yield
    os.chdir(before)


def test_fit_then_check(at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.yaml"
    assert main(["sim", "fit", "results/compare-models.jsonl", "--model", "smollm2", "-o", str(out)]) == 0
    text = out.read_text()
    assert "/work/" not in text and str(ROOT) not in text
    profile = load_profile(str(out))
    fitted = profile.fitted
    assert fitted is not None and fitted.model == "smollm2" and fitted.runs == 80
    assert fitted.model_sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert [s.file for s in fitted.sources] == ["compare-models.jsonl"]
    assert all(e.low <= e.value <= e.high and e.count <= e.calls for e in fitted.estimates.values())
    assert any("per-family parameters" in n for n in fitted.notes) and profile.overrides
    capsys.readouterr()
    args = ["sim", "check", str(out), "results/compare-models.jsonl", "--draws", "2", "--runs", "2"]
    assert main(args) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("SIMULATED (fitted to smollm2 from compare-models.jsonl)")
    assert "cells inside the simulation's 95% prediction interval: " in shown and " of 16 " in shown
    assert "leave-one-stack-out" in shown and "  grammar: observed 0.00 (n=20)" in shown


def test_no_real_call_of_the_model_is_an_input_error(at_root: None, tmp_path: Path) -> None:
    args = ["sim", "fit", "results/compare-models.jsonl", "--model", "nope", "-o", str(tmp_path / "p.yaml")]
    assert main(args) == 2


def test_check_refuses_a_profile_that_was_not_fitted(at_root: None) -> None:
    assert main(["sim", "check", "evalkit/profiles/small-local.yaml", "results/compare-models.jsonl"]) == 2


def test_list_shows_the_fitted_profiles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "profiles"]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "  fitted/smollm2" in shown and "  fitted/gemma3-270m" in shown and "  small-local" in shown


# -- issue 30: hostile and careless inputs -------------------------------------------------------------


def _profile_counting(tmp_path: Path, estimate: str, count: int) -> Path:
    """The shipped fitted profile with one estimate's `count` changed."""
    text = (ROOT / "evalkit/profiles/fitted/smollm2.yaml").read_text()
    at = text.index(f"    {estimate}:\n")
    start = text.index("      count: ", at)
    path = tmp_path / "edited.yaml"
    path.write_text(text[:start] + f"      count: {count}" + text[text.index("\n", start) :])
    return path


@pytest.mark.parametrize("command", ["sim check", "plan --profile"])
def test_an_estimate_counting_more_than_its_calls_is_exit_2_naming_it(
    command: str, at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: ValueError: b <= 0 from numpy's beta draw, exit 1
    edited = _profile_counting(tmp_path, "reply_step.uses_respond", 5000)
    argv = (
        ["sim", "check", str(edited), "results/compare-models.jsonl"]
        if command == "sim check"
        else ["plan", "results/compare-models.jsonl", "--profile", str(edited)]
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalkit: error: {edited}: fitted.estimates.reply_step.uses_respond: count 5000 is more")
    assert err.count("\n") == 1


def test_fit_makes_the_output_folder(at_root: None, tmp_path: Path) -> None:
    # before: FileNotFoundError traceback for -o missing-dir/p.yaml
    out = tmp_path / "missing-dir" / "p.yaml"
    assert main(["sim", "fit", "results/compare-models.jsonl", "--model", "smollm2", "-o", str(out)]) == 0
    assert load_profile(str(out)).fitted is not None


def test_fit_never_replaces_a_results_file(at_root: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: `sim fit RESULTS --model smollm2 -o victim.jsonl` replaced 80 run records with a profile, exit 0
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes((ROOT / "results/compare-models.jsonl").read_bytes())
    before = victim.read_bytes()
    assert main(["sim", "fit", "results/compare-models.jsonl", "--model", "smollm2", "-o", str(victim)]) == 2
    err = capsys.readouterr().err
    assert err == f"evalkit: error: -o {victim}: holds evalkit results, which this command does not replace: " + (
        "choose another path\n"
    )
    assert victim.read_bytes() == before
