"""`report --published`: a source's numbers beside the measured cells of the same guard stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ConfigError
from evalkit.report.data import build_report
from evalkit.report.html import render_html
from evalkit.report.markdown import render_markdown
from evalkit.report.published import load_published, with_published
from tests.report import records

ROOT = Path(__file__).resolve().parents[2]

TABLE = """\
source: 'Someone <script>alert(1)</script> et al.'
metric: completed
families: [casual_greeting, sequential_reasoning]
rows:
  - {label: "Model X, trust text", strategy: trust_text, rates: {casual_greeting: 0.5, sequential_reasoning: null}}
  - {label: "Model X, other", rates: {casual_greeting: 1.0}}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "published.yaml"
    path.write_text(text)
    return path


def test_published_rows_sit_above_the_measured_cells_of_their_stack(tmp_path: Path) -> None:
    runs = records.cell_runs(4, 3, strategy="trust_text", family="casual_greeting", scenario="greet-hi")
    data = with_published(build_report(records.results(runs), include_power=False), _write(tmp_path, TABLE))
    assert data.published is not None
    labels = [(row.label, row.published) for row in data.published.rows]
    assert labels[0] == ("Model X, trust text", True) and labels[-1] == ("Model X, other", True)
    measured = [row for row in data.published.rows if not row.published]
    assert measured and all("trust_text" in row.label for row in measured)
    greeting = measured[0].values[0]
    assert greeting is not None and (greeting.x, greeting.n) == (sum(r.completed for r in runs), len(runs))
    assert measured[0].values[1] is None  # no sequential run measured
    html = render_html(data)
    assert "Published numbers beside measured ones" in html and "<script>alert" not in html
    assert "no counted run" in html and "not measured" in html
    assert "*published* Model X, trust text | 50% | not measured |" in render_markdown(data)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (TABLE.replace("0.5", "50"), "rows.0"),
        (TABLE.replace("casual_greeting: 1.0", "greetings: 1.0"), "rows.1.rates"),
        (TABLE.replace("metric: completed", "metric: speed"), "metric"),
        ("source: x\nfamilies: [a]\nrows: []\n", "rows"),
    ],
)
def test_a_broken_table_names_the_file_and_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"published\.yaml(:\d+)?: {field}"):
        load_published(path)


def test_the_committed_adr013_table_loads_and_the_report_shows_it(tmp_path: Path) -> None:
    published = load_published(ROOT / "configs" / "adr013-published.yaml")
    assert published.rows[0].rates["sequential_reasoning"] == 0.04
    out = tmp_path / "adr013.md"
    argv = ["report", str(ROOT / "results" / "adr013.jsonl"), "--format", "markdown", "-o", str(out)]
    assert main([*argv, "--published", str(ROOT / "configs" / "adr013-published.yaml")]) == 0
    text = out.read_text()
    assert (  # each published rate with the Wilson interval of its N (25 here, the file's `n`)
        "| *published* Ministral 8B, ADR-013, trust text (approach A) | 4% [1–20] 1/25 | 16% [6–35] 4/25 "
        "| 32% [17–52] 8/25 | not measured |"
    ) in text


def test_the_committed_adr013_report_shows_the_published_table() -> None:
    html = (ROOT / "reports" / "adr013.html").read_text(encoding="utf-8")
    assert 'id="published-table"' in html and "Ministral 8B, ADR-013, trust text" in html


def test_a_row_with_backends_lists_only_their_columns(tmp_path: Path) -> None:
    """A guard proxy's entry runs `trust_text` on evalkit's side: a row that names backends keeps it
    from being listed as "trust text", and a later row picks it up."""
    runs = [
        *records.cell_runs(1, 2, backend="direct", strategy="trust_text", family="casual_greeting"),
        *records.cell_runs(2, 2, backend="forge-proxy", strategy="trust_text", family="casual_greeting"),
    ]
    table = """\
source: s
families: [casual_greeting]
rows:
  - {label: "trust text", strategy: trust_text, backends: [direct], rates: {casual_greeting: 0.5}}
  - {label: "Forge's proxy", strategy: trust_text, backends: [forge-proxy], rates: {casual_greeting: null}}
  - {label: "any trust text", strategy: trust_text, rates: {casual_greeting: 0.1}}
"""
    data = with_published(build_report(records.results(runs), include_power=False), _write(tmp_path, table))
    assert data.published is not None
    labels = [row.label.split(" · ")[0] for row in data.published.rows]
    assert labels == ["trust text", "measured: direct", "Forge's proxy", "measured: forge-proxy", "any trust text"]
    with pytest.raises(ConfigError, match="backends"):
        load_published(_write(tmp_path, table.replace("backends: [direct]", "backends: []")))
