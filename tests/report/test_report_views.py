"""The report's answers: the findings summary, model-against-model comparisons, cost, fixed colours,
portable provenance, drill-downs that open without script, and the requests as sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scipy import stats as sps

from evalkit.chat import Completion, Usage
from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.plots import failure_breakdown
from evalkit.report.provenance import portable
from evalkit.report.style import FAILURE_COLOURS
from evalkit.results.records import FAILURE_CATEGORIES, ModelCall, RunRecord
from evalkit.stats.pvalues import holm
from tests.report import records
from tests.report.test_report_html import Page

ROOT = Path(__file__).resolve().parents[2]


def _cell(
    correct: int,
    n: int,
    *,
    strategy: str,
    backend: str = "sim",
    calls: int = 1,
    latency: float = 1.0,
    seed_offset: int = 0,
    family: str = "fam",
) -> list[RunRecord]:
    runs = records.cell_runs(correct, n, strategy=strategy, backend=backend, model=backend, family=family)
    return [
        r.model_copy(
            update={
                "model_calls": calls,
                "latency_s": latency + r.index,
                "seed": r.seed + seed_offset,
                "usage": Usage(prompt_tokens=100, completion_tokens=10),
            }
        )
        for r in runs
    ]


def test_findings_name_the_best_stack_and_those_the_data_cannot_tell_from_it() -> None:
    runs = [*_cell(10, 10, strategy="a", calls=3), *_cell(2, 10, strategy="b"), *_cell(9, 10, strategy="c")]
    data = build_report(records.results(runs), include_power=False)
    (finding,) = data.findings
    assert (finding.model, finding.family, finding.best.stack) == ("sim", "fam", "native · a")
    assert finding.best.correct.x == 10 and finding.best.cost.model_calls_mean == 3
    assert finding.best.cost.latency_median_s == pytest.approx(5.5)  # latencies 1..10
    # independent reference: scipy's exact binomial test on the discordant pairs, then Holm
    p_b = sps.binomtest(8, 8, 0.5, alternative="greater").pvalue
    p_c = sps.binomtest(1, 1, 0.5, alternative="greater").pvalue
    adjusted = holm([p_b, p_c])
    assert [c.stack for c in finding.worse] == ["native · b"] and finding.worse[0].p_holm == pytest.approx(adjusted[0])
    assert [c.stack for c in finding.not_worse] == ["native · c"]
    assert finding.not_worse[0].p_holm == pytest.approx(adjusted[1])
    assert finding.sentence == (
        "sim, fam: best is native · a, correct 100% [72–100%] (10/10), at 0.0 retries, 3.0 model calls and "
        "5.5 s median latency per run. Not significantly worse (one-sided, Holm, α = 0.05): "
        "native · c 90% (9/10, 0.0 retries). Significantly worse: native · b 20% (2/10, 0.0 retries)."
    )


def test_findings_break_ties_by_cost_and_say_when_nothing_is_correct() -> None:
    runs = [
        *_cell(5, 5, strategy="costly", calls=4),
        *_cell(5, 5, strategy="cheap", calls=1),
        *_cell(0, 5, strategy="a", family="hard"),
        *_cell(0, 5, strategy="b", family="hard"),
    ]
    data = build_report(records.results(runs), include_power=False)
    by_family = {f.family: f for f in data.findings}
    assert by_family["fam"].best.stack == "native · cheap"
    assert by_family["hard"].sentence == (
        "sim, hard: no stack produced a correct run (0/5 for each of 2); nothing to ship."
    )
    html = render_html(data)
    assert "no stack produced a correct run (2 tried, N = 5)" in html
    alone = build_report(records.results(_cell(0, 5, strategy="a", family="hard")), include_power=False)
    only = "sim, hard: the only stack measured, native · a, produced no correct run (0/5)."
    assert alone.findings[0].sentence == only
    assert html.index('id="findings"') < html.index('id="matrix"') < html.index('id="provenance"')


def test_findings_are_per_model_and_models_are_compared_per_strategy_and_family() -> None:
    paired = [*_cell(9, 10, strategy="a", backend="m1"), *_cell(3, 10, strategy="a", backend="m2")]
    data = build_report(records.results(paired), include_power=False)
    assert [f.model for f in data.findings] == ["m1", "m2"]
    models = [c for c in data.comparisons if c.kind == "model"]
    assert {(c.group, c.scope, c.a, c.b) for c in models} == {
        ("native · a", "all scenarios", "m1", "m2"),
        ("native · a", "fam", "m1", "m2"),
    }
    assert all(c.test.startswith("McNemar") and c.discordant == (6, 0) for c in models)  # same seeds: paired
    unpaired = [*_cell(9, 10, strategy="a", backend="m1"), *_cell(3, 10, strategy="a", backend="m2", seed_offset=7)]
    models = [c for c in build_report(records.results(unpaired), include_power=False).comparisons if c.kind == "model"]
    assert models and all(c.test == "Boschloo exact" and c.discordant is None for c in models)


def test_cost_per_cell_is_in_the_tooltip_and_the_cost_table() -> None:
    data = build_report(records.results(_cell(3, 4, strategy="a", calls=2)), include_power=False)
    stats = data.cell(data.rows[0], data.columns[0])
    assert stats is not None and stats.cost is not None
    assert (stats.cost.latency_median_s, stats.cost.latency_p90_s) == (pytest.approx(2.5), pytest.approx(3.7))
    assert stats.cost.tokens_mean == 110 and stats.cost.model_calls_mean == 2
    html = render_html(data)
    assert "latency median 2.5s, p90 3.7s; 110 tokens, 2.0 model calls (0.0 wasted) per run" in html
    assert 'id="cost"' in html and 'id="plot-tradeoff"' in html


def test_failure_categories_keep_their_colour_whatever_else_the_report_holds() -> None:
    def svg(*categories: str) -> str:
        runs = [
            records.run(index=i, completed=False).model_copy(update={"failure": c, "correct": False})
            for i, c in enumerate(categories)
        ]
        return failure_breakdown(build_report(records.results(runs), include_power=False)).lower()

    alone, mixed = svg("wrong_answer"), svg("malformed_call", "degenerate_output", "wrong_answer")
    for text in (alone, mixed):
        assert FAILURE_COLOURS["wrong_answer"] in text
    assert FAILURE_COLOURS["degenerate_output"] in mixed and FAILURE_COLOURS["malformed_call"] in mixed
    assert len(set(FAILURE_COLOURS.values())) == len(FAILURE_COLOURS)


def test_provenance_is_portable_and_keeps_the_whole_sha256(tmp_path: Path) -> None:
    sha = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    backends = {
        "sim": {
            "kind": "llama-server",
            "model": "m",
            "build_info": "b1234",
            "model_path": "/home/u/proj/.venv/lib/python3.11/site-packages/llm_x/x.gguf",
            "model_sha256": sha,
            "started_by_evalkit": {"binary": "/home/u/proj/.venv/bin/llama-server"},
        }
    }
    results = records.results(records.cell_runs(1, 2), backends=backends)
    results.paths = ["/home/u/proj/results/a.jsonl"]
    data = build_report(results, include_power=False, root="/home/u/proj")
    (backend,) = data.provenance.backends
    assert dict(backend.details)["model_path"] == "site-packages/llm_x/x.gguf"
    assert dict(backend.details)["started_by_evalkit.binary"] == ".venv/bin/llama-server"
    assert data.provenance.files == ("results/a.jsonl",)
    assert dict(backend.essentials) | {} == {
        "model file": "x.gguf",
        "sha256": sha,
        "server build": "b1234",
        "evalkit": "0.0.test",
        "git": "abc123",
        "date": "2026-01-01",
        "N": "25",
        "seeds": "1",
    }
    html = render_html(data)
    assert "/home/u" not in html and f"<code>{sha}</code>" in html
    assert portable("/opt/venv/lib/python3.12/dist-packages/a/b.py") == "dist-packages/a/b.py"


@pytest.mark.parametrize("name", ["adr013.html", "compare-models.html"])
def test_committed_reports_carry_no_machine_path_and_lead_with_correct(name: str) -> None:
    html = (ROOT / "reports" / name).read_text(encoding="utf-8")
    assert not re.search(r"(/work/|/home/|/root/|/tmp/|/Users/)", html)
    assert html.index('id="findings"') < html.index('id="matrix"')
    assert "<h2>Correct-rate matrix</h2>" in html


def test_a_matrix_cell_opens_its_drill_down_without_script() -> None:
    data = build_report(records.results(records.cell_runs(2, 3)), include_power=False)
    html = render_html(data)
    page = Page(html)
    links = {a["href"][1:] for a in page.named("a") if (a.get("href") or "").startswith("#d-")}
    cells = {d["id"] for d in page.named("div") if "cell" in (d.get("class") or "").split()}
    assert links and links == cells == {d.id for d in data.drilldowns}
    assert "div.cell:target > .cellbody { display: block; }" in html and "<script" not in html


def test_requests_as_sent_are_shown_collapsed_and_escaped() -> None:
    system = "You can call these tools:\n- <script>alert('tool')</script>: a tool"
    call = ModelCall(
        index=0,
        n_messages=2,
        tools=["t"],
        tool_choice="required",
        constraint="grammar:0123456789ab",
        completion=Completion(text="x", finish_reason="stop", usage=Usage(prompt_tokens=5)),
        decision="accept",
        system_sent=system,
    )
    run = records.run(completed=False, mode="prompt").model_copy(update={"calls": [call]})
    html = render_html(build_report(records.results([run]), include_power=False))
    section = html[html.index('<details class="requests">') :]
    section = section[: section.index("</details>")]
    assert "Requests as sent (1 model calls, prompt mode)" in section
    assert "<code>required</code>" in section and "<code>grammar:0123456789ab</code>" in section
    assert "&lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;" in section and "<script>" not in html
    older = records.run(completed=False, mode="prompt").model_copy(
        update={"calls": [call.model_copy(update={"system_sent": None})]}
    )
    assert "predates the recording of the system prompt" in render_html(
        build_report(records.results([older]), include_power=False)
    )


def test_mixed_data_is_marked_per_column_not_in_the_title() -> None:
    runs = [*records.cell_runs(2, 3), *records.cell_runs(1, 3, backend="s", model="s", simulated=True)]
    html = render_html(build_report(records.results(runs), include_power=False))
    assert "<title>evalkit report" in html and "[SIMULATED]" not in html
    assert "<strong>Mixed data.</strong>" in html and "(SIMULATED)" not in html
    assert "s · s · native [SIM]" in html  # in the plots' labels


def test_power_table_says_none_instead_of_a_dash() -> None:
    html = render_html(build_report(records.results(records.cell_runs(1, 1))))
    assert "≤ –" not in html and "none (not even a fall to 0%)" in html


def test_every_failure_category_has_its_colour() -> None:
    """The categories are one Literal (`FailureCategory`); the colour table must follow it."""
    assert list(FAILURE_COLOURS) and set(FAILURE_COLOURS) == set(FAILURE_CATEGORIES)
