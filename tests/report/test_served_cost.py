"""Cost per run behind a guard proxy: what the model server served, beside what evalkit saw."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evalkit.chat import Usage
from evalkit.report.cells import cell_stats
from evalkit.report.data import build_report
from evalkit.report.formats import cost_text
from evalkit.report.html import render_html
from evalkit.report.markdown import render_markdown
from evalkit.report.terminal import summary_table
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord, Served
from evalkit.results.scan import scan_results
from tests.report.records import run, write_results


def _proxied(index: int, seen: int, served: int) -> RunRecord:
    record = run(index=index, backend="proxy", retries=seen - 1)
    return record.model_copy(
        update={
            "usage": Usage(prompt_tokens=10, completion_tokens=2),
            "latency_s": 9.0,
            "served": Served(
                calls=served, prompt_tokens=40 * served, completion_tokens=5 * served, latency_s=2.0 * served
            ),
        }
    )


def test_the_cost_of_a_proxied_run_is_what_the_model_served() -> None:
    runs = [_proxied(0, 1, 4), _proxied(1, 1, 2), _proxied(2, 2, 6)]
    cost = cell_stats(runs, np.random.default_rng(0)).cost
    assert cost is not None and cost.served_runs == 3
    assert cost.model_calls_mean == 4.0 and cost.calls_seen_mean == 4 / 3
    assert cost.tokens_mean == 45 * 4.0  # (40 + 5) per served call, 12 served calls over 3 runs
    assert cost.latency_median_s == 8.0 and cost.latency_mean_s == 8.0  # the model server's 2 s a call
    assert cost.wasted_calls_mean == (3 + 1 + 5) / 3  # served calls beyond the ideal 1
    assert "4.0 model calls served (1.3 seen)" in cost_text(cost)
    plain = cell_stats([run(index=0, retries=1)], np.random.default_rng(0)).cost
    assert plain is not None and plain.served_runs == 0 and "2.0 model calls (" in cost_text(plain)


def test_summary_html_and_markdown_show_seen_and_served(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", [_proxied(0, 1, 4), _proxied(1, 1, 4), run(index=0, backend="direct")])
    summary = summary_table(scan_results([path]))
    assert "calls per run: 1.0 seen, 4.0 served" in summary and summary.count("calls per run:") == 2  # legend + row
    data = build_report(load_results([path]), include_power=False)
    assert 'served<br><span class="muted">1.00 seen' in render_html(data)
    markdown = render_markdown(data)
    assert "| calls seen | calls served |" in markdown and "| trust_text | 1.0 | 4.0 | 180 | 8.00 s |" in markdown
