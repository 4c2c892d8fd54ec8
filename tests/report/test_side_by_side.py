"""The side-by-side table: two columns a config says claim the same behaviour, per family, with both
rates, served calls, the difference and a two-sided exact test, held against scipy."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scipy.stats import binomtest, boschloo_exact

from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.jsonfmt import render_json
from evalkit.report.markdown import render_markdown
from evalkit.results.records import Served
from evalkit.results.runs import Results
from evalkit.run.config import RunConfig
from evalkit.stats.proportions import newcombe
from evalkit.stats.pvalues import holm
from tests.report.records import header, run

PAIR = {"claim": "retry <b>3</b>", "left": {"backend": "proxy", "strategy": "trust_text"},
        "right": {"backend": "direct", "strategy": "nudge"}}  # fmt: skip


def _results(pairs: list[dict[str, Any]], runs: list[Any]) -> Results:
    head = header()
    head.config = {"side_by_side": pairs}
    return Results(headers=[head], runs=runs, paths=["mem.jsonl"])


def _column(passes: dict[str, int], n: int, **fields: Any) -> list[Any]:
    """n runs per family, the first passes[family] correct; proxy runs served 3 calls each."""
    out = []
    for family, x in passes.items():
        for i in range(n):
            record = run(index=i, completed=i < x, family=family, scenario=f"{family}-s", **fields)
            if fields.get("backend") == "proxy":
                record = record.model_copy(update={"served": Served(calls=3, errors=0)})
            out.append(record)
    return out


def test_each_family_has_rates_served_calls_and_boschloos_two_sided_test() -> None:
    left = _column({"greet": 3, "chain": 9}, 10, backend="proxy", strategy="trust_text", seed=None)
    right = _column({"greet": 8, "chain": 9}, 10, backend="direct", strategy="nudge")
    for r in right:  # other seeds: the two sides do not pair
        r.seed += 50_000
    lines = build_report(_results([PAIR], left + right), include_power=False).side_by_side
    assert [line.scope for line in lines] == ["all scenarios", "chain", "greet"]
    greet = lines[2]
    assert (greet.left.correct.x, greet.left.correct.n, greet.right.correct.x) == (3, 10, 8)  # type: ignore[union-attr]
    assert greet.left.served_calls == 3.0 and greet.left.seen_calls == 1.0 and greet.right.served_calls == 1.0
    expected = boschloo_exact([[3, 8], [7, 2]], alternative="two-sided").pvalue
    assert greet.test == "Boschloo exact" and greet.p == pytest.approx(expected, rel=1e-6)
    assert greet.difference == newcombe(3, 10, 8, 10)
    raw = [line.p for line in lines]
    assert [line.p_holm for line in lines] == pytest.approx(holm(raw))  # type: ignore[arg-type]
    assert [line.significant for line in lines] == [p <= 0.05 for p in holm(raw)]  # type: ignore[arg-type]


def test_runs_that_pair_use_mcnemar() -> None:
    """Same seeds on both sides (as a config gives two stacks of one backend): exact McNemar, as scipy's
    binomial test on the discordant pairs."""
    pair = {**PAIR, "left": {"backend": "direct", "strategy": "trust_text"}}
    left = [run(index=i, completed=i < 2, backend="direct", strategy="trust_text") for i in range(12)]
    right = [run(index=i, completed=i < 9, backend="direct", strategy="nudge") for i in range(12)]
    (overall, _) = build_report(_results([pair], left + right), include_power=False).side_by_side
    assert overall.test == "McNemar exact (paired)"
    assert overall.p == pytest.approx(binomtest(0, 7, 0.5).pvalue)


def test_a_side_without_runs_shows_no_test_and_the_table_renders_everywhere() -> None:
    missing = {**PAIR, "claim": "no runs", "right": {"backend": "absent", "strategy": "nudge"}}
    left = _column({"greet": 3}, 4, backend="proxy", strategy="trust_text")
    right = _column({"greet": 1}, 4, backend="direct", strategy="nudge")
    data = build_report(_results([PAIR, missing], left + right), include_power=False)
    assert [line.p is None for line in data.side_by_side] == [False, False, True, True]
    html = render_html(data)
    assert 'id="side-by-side"' in html and "retry &lt;b&gt;3&lt;/b&gt;" in html and "<b>3</b>" not in html
    assert "3.0 (1.0 seen)" in html and "no counted run on one side" in html
    md = render_markdown(data)
    assert (
        "| retry &lt;b&gt;3&lt;/b&gt; | greet | proxy · native · trust_text | 75% [30–95] 3/4 | 3.0 (1.0 seen) |" in md
    )
    assert "<b>" not in md
    assert json.loads(render_json(data))["side_by_side"][0]["claim"] == "retry <b>3</b>"
    assert "side-by-side" not in render_html(build_report(_results([], left + right), include_power=False))


def test_a_pair_must_name_a_column_of_the_matrix() -> None:
    base = {
        "name": "t",
        "scenarios": ["x"],
        "backends": [{"label": "direct", "kind": "sim", "model": "m"},
                     {"label": "proxy", "kind": "sim", "model": "m", "strategies": ["trust_text"]}],
        "strategies": {"trust_text": ["trust_text"], "nudge": ["retry_nudge"]},
    }  # fmt: skip
    RunConfig.model_validate({**base, "side_by_side": [PAIR]})
    for bad, message in [
        (
            {**PAIR, "left": {"backend": "nope", "strategy": "trust_text"}},
            "side_by_side.0.left: no backend entry 'nope'",
        ),
        ({**PAIR, "left": {"backend": "proxy", "strategy": "nudge"}}, "proxy does not run 'nudge' in native mode"),
    ]:
        with pytest.raises(ValueError, match=message):
            RunConfig.model_validate({**base, "side_by_side": [bad]})
