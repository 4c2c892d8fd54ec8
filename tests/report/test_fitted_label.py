"""Results simulated from a fitted profile say which model and files the profile was fitted to,
wherever simulated results are labelled: markdown, HTML and the terminal summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import summary_table
from evalkit.results.reader import load_results
from evalkit.results.runs import Results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config

ROOT = Path(__file__).resolve().parents[2]
LABEL = "SIMULATED (fitted to gemma3-270m from "


def _run(folder: Path, profile: str) -> Path:
    config = RunConfig.model_validate(
        {
            "name": "fitted-label",
            "runs": 2,
            "scenarios": [str(ROOT / "scenarios/casual_greeting/hi.yaml")],
            "backends": [{"label": "g", "kind": "sim", "model": profile}],
            "strategies": {"trust_text": ["trust_text"]},
        }
    )
    return run_config(config, folder / f"{profile.replace('/', '-')}.jsonl")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return load_results([_run(tmp_path_factory.mktemp("fitted"), "fitted/gemma3-270m")])


def test_terminal_summary(fitted: Results) -> None:
    assert f"[SIM] g: {LABEL}" in summary_table(fitted)


def test_markdown_and_html(fitted: Results) -> None:
    data = build_report(fitted, include_power=False)
    markdown = render_markdown(data)
    assert f"> g: {LABEL}" in markdown
    assert f"({LABEL}" in markdown
    assert LABEL in render_html(data)


def test_a_hand_written_profile_keeps_the_plain_label(tmp_path: Path) -> None:
    plain = load_results([_run(tmp_path, "small-local")])
    assert "fitted to" not in summary_table(plain)
    assert "fitted to" not in render_markdown(build_report(plain, include_power=False))
