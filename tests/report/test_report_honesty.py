"""What a report must not let a reader misread: a stack "not significantly worse" only because no
outcome could have shown it, runs not counted lumped together, and an unfinished file read as final."""

from __future__ import annotations

from pathlib import Path

from evalkit.report import render
from evalkit.report.data import build_report
from evalkit.report.findings import finding_sentence
from evalkit.results.integrity import load_checked
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results
from evalkit.results.writer import ResultsWriter
from evalkit.stats.pvalues import mcnemar
from tests.report import records

STACKS = ("a", "b", "c", "d")


def _five_runs_each(best_passes: int = 5, other_passes: int = 0) -> list[RunRecord]:
    runs = records.cell_runs(best_passes, 5, strategy="a")
    for strategy in STACKS[1:]:
        runs += records.cell_runs(other_passes, 5, strategy=strategy)
    return runs


def test_zero_of_five_against_five_of_five_paired_is_too_few_runs_to_tell() -> None:
    # paired runs: the most lopsided outcome, 5 discordant pairs, has p = 1/32 before Holm's x3
    assert 3 * mcnemar(5, 0, alternative="greater") > 0.05
    data = build_report(records.results(_five_runs_each(), runs_per_cell=5), include_power=False)
    finding = data.findings[0]
    assert finding.best.stack.endswith("a") and len(finding.too_few) == 3 and finding.not_worse == ()
    sentence = finding_sentence(finding)
    assert "Too few runs to tell" in sentence and "Not significantly worse" not in sentence
    assert "too few runs to tell" in render(data, "html")


def test_enough_runs_keep_the_plain_words() -> None:
    runs = records.cell_runs(25, 25, strategy="a") + records.cell_runs(24, 25, strategy="b")
    data = build_report(records.results(runs), include_power=False)
    assert len(data.findings[0].not_worse) == 1 and data.findings[0].too_few == ()
    assert "Not significantly worse" in data.findings[0].sentence
    assert "Too few" not in data.findings[0].sentence


def test_unsupported_runs_are_not_called_infra_errors() -> None:
    runs = records.cell_runs(5, 5) + [
        records.run(index=i, outcome="unsupported", completed=False, strategy="grammar") for i in range(5)
    ]
    data = build_report(records.results(runs, runs_per_cell=5), include_power=False)
    assert (data.infra_errors, data.unsupported) == (0, 5)
    html = render(data, "html")
    assert "5 unsupported" in html and "infra errors or unsupported" not in html
    assert "0 infra errors" not in html


def _interrupted(path: Path) -> Path:
    writer = ResultsWriter(path)
    writer.write(records.header(runs_per_cell=5))
    for record in records.cell_runs(5, 5, strategy="a") + records.cell_runs(1, 2, strategy="b"):
        writer.write(record)
    writer.close()  # no footer: the run was interrupted
    return path


def test_an_interrupted_file_gets_a_banner_and_provisional_findings(tmp_path: Path) -> None:
    results = load_checked([_interrupted(tmp_path / "cut.jsonl")], warn=lambda _m: None)
    data = build_report(results, include_power=False)
    assert any("no footer" in why for why in data.incomplete)
    assert any("runs missing" in why for why in data.incomplete)
    html = render(data, "html")
    assert 'id="incomplete-banner"' in html and "Provisional" in html
    assert "Incomplete results" in render(data, "markdown")


def test_a_finished_file_has_no_banner(tmp_path: Path) -> None:
    path = records.write_results(tmp_path / "done.jsonl", records.cell_runs(5, 5), runs_per_cell=5)
    data = build_report(load_checked([path]), include_power=False)
    assert data.incomplete == ()
    assert 'id="incomplete-banner"' not in render(data, "html")


def test_a_stack_label_shows_the_options_its_config_set() -> None:
    config = {"strategies": {"retry_nudge": [{"retry_nudge": {"max_retries": 1}}], "plain": ["trust_text"]}}
    header = records.header().model_copy(update={"config": config})
    runs = records.cell_runs(3, 5, strategy="retry_nudge") + records.cell_runs(2, 5, strategy="plain")
    data = build_report(Results(headers=[header], runs=runs, paths=["mem.jsonl"]), include_power=False)
    assert ("retry_nudge", "retry_nudge(max_retries=1)") in data.provenance.stacks
    html = render(data, "html")
    assert 'title="retry_nudge(max_retries=1)"' in html  # the matrix header says what the label runs
    assert "retry_nudge = retry_nudge(max_retries=1)" in render(data, "markdown")
