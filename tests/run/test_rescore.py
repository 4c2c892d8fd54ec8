"""`evalkit rescore`: re-judging stored model outputs with the current checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.reader import load_results
from evalkit.run.rescore import rescore_results
from evalkit.scenario.model import load_scenarios


def verdicts(path: Path) -> dict[str, tuple[object, ...]]:
    return {
        r.run_id: (r.outcome, r.completed, r.correct, r.failure, r.model_calls, r.retries)
        for r in load_results([path]).runs
    }


@pytest.mark.parametrize("name", ["compare-models", "adr013"])
def test_the_committed_results_are_scored_by_the_current_checker(repo_root: Path, tmp_path: Path, name: str) -> None:
    committed = repo_root / f"results/{name}.jsonl"
    scenarios = load_scenarios(sorted((repo_root / "scenarios").rglob("*.yaml")))
    summary = rescore_results(committed, tmp_path / "again.jsonl", scenarios)
    assert summary.rejudged > 0 and summary.changed == 0
    assert verdicts(tmp_path / "again.jsonl") == verdicts(committed)
    headers = load_results([committed]).headers
    # segments rescored in place say so; a segment run since (ADR-013's simulated entries, re-run when
    # the profiles changed) was judged by the current checker when it ran
    rescored = [h for h in headers if h.rescored]
    assert rescored and all(h.rescored["from"] == f"{name}.jsonl" and h.rescored["evalkit_version"] for h in rescored)


def test_gemmas_template_token_greeting_is_degenerate_output(repo_root: Path) -> None:
    runs = [
        r
        for r in load_results([repo_root / "results/compare-models.jsonl"]).runs
        if r.cell.backend == "gemma3-270m" and r.cell.scenario == "greet-hi" and r.cell.strategy == "trust_text"
    ]
    assert runs and all(r.failure == "degenerate_output" and not r.correct for r in runs)
    item = next(i for i in runs[0].check if i.item == "reply is not degenerate")
    assert "<|im_start|>" in item.detail or "control tokens" in item.detail


def test_rescore_re_judges_with_changed_scenarios_and_names_missing_ones(
    repo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = repo_root / "results/compare-models.jsonl"
    hi = (repo_root / "scenarios/casual_greeting/hi.yaml").read_text()
    (tmp_path / "s").mkdir()
    for path in (
        "sequential_reasoning/weather_trip",
        "relevance_detection/square_root",
        "data_gap_recovery/missing_date",
    ):
        (tmp_path / "s" / f"{path.split('/')[1]}.yaml").write_text((repo_root / f"scenarios/{path}.yaml").read_text())
    strict = hi.replace("reply: {}", "reply: {contains: [zebra]}")
    assert strict != hi
    (tmp_path / "s/hi.yaml").write_text(strict)
    out = tmp_path / "out.jsonl"
    assert main(["rescore", str(source), "-o", str(out), "--scenarios", str(tmp_path / "s")]) == 0
    assert "160 of 160 runs re-judged" in capsys.readouterr().out
    greetings = [r for r in load_results([out]).runs if r.cell.scenario == "greet-hi"]
    assert greetings and not any(r.correct for r in greetings)
    (tmp_path / "s/hi.yaml").unlink()
    with pytest.raises(ResultsError, match="scenario 'greet-hi' is not among"):
        rescore_results(source, tmp_path / "x.jsonl", load_scenarios(sorted((tmp_path / "s").glob("*.yaml"))))
