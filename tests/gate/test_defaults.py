"""The gate's defaults on the default matrix (simulated): the issue-8 candidate with `retry_nudge:
{max_retries: 1}` and a new nudge text must fail, an identical candidate must pass."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.gate.render import render_text
from evalkit.results.reader import load_results
from evalkit.results.runs import Results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.runner import run_config

ROOT = Path(__file__).resolve().parents[2]
NEW_NUDGE = "That was not a tool call. Use one of the tools you were given."


def one_retry_variant(config: RunConfig) -> RunConfig:
    """The issue's candidate: the default matrix with `retry_nudge: {max_retries: 1}` and a new nudge text."""
    strategies = dict(config.strategies)
    strategies["retry_nudge"] = [{"retry_nudge": {"max_retries": 1, "message": NEW_NUDGE}}]
    return config.model_copy(update={"name": "one-retry", "strategies": strategies})


@dataclass(frozen=True)
class Matrix:
    baseline: Results
    identical: Results
    one_retry: Results


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    folder = tmp_path_factory.mktemp("default-matrix")
    default = load_config(ROOT / "configs/default.yaml")
    paths = [
        run_config(config, folder / f"{name}.jsonl")
        for name, config in (
            ("baseline", default),
            ("identical", default.model_copy(update={"name": "identical"})),
            ("one-retry", one_retry_variant(default)),
        )
    ]
    return Matrix(*(load_results([p]) for p in paths))


def test_the_one_retry_candidate_fails_at_the_defaults(matrix: Matrix) -> None:
    result = compare(matrix.baseline, matrix.one_retry)
    assert (result.level, result.metric) == ("scenario", "correct")
    assert not result.passed
    failed = result.failed
    # the multi-step workflows, where one retry is too few (small-local's draws since its call_as_text)
    assert {v.strategy for v in failed} == {"retry_nudge"}
    assert {v.family for v in failed} == {"sequential_reasoning", "data_gap_recovery"}
    text = render_text(result)
    for v in failed:
        assert v.candidate.value < v.baseline.value and v.p_holm <= 0.05
        assert (
            f"FAIL {v.name} (family {v.family}, scenario {v.scenario}, model small-local, "
            f"strategy retry_nudge, backend sim-small, mode {v.mode})"
        ) in text


def test_pooling_the_column_hides_it_which_is_why_it_is_not_the_default(matrix: Matrix) -> None:
    pooled = compare(matrix.baseline, matrix.one_retry, GateConfig(level="cell"))
    column = [v for v in pooled.cells if v.strategy == "retry_nudge"]
    assert column and all(not v.failed for v in column)  # gains elsewhere mask the workflow losses
    assert not compare(matrix.baseline, matrix.one_retry, GateConfig(level="family")).passed


def test_an_identical_candidate_passes_at_every_level_and_metric(matrix: Matrix) -> None:
    for level in ("scenario", "family", "cell"):
        for metric in ("correct", "completed"):
            result = compare(matrix.baseline, matrix.identical, GateConfig(level=level, metric=metric))
            assert result.passed and all(v.p == 1.0 for v in result.cells), (level, metric)
