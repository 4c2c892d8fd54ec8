"""Markdown and JSON reports, merged shards, and API keys kept out of every report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli import main
from evalkit.report import FORMATS, render
from evalkit.report.data import build_report
from evalkit.results.escaping import markdown_cell
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from tests.report import records
from tests.report.test_report_data import XSS_REPLY, SimRun, shared_sim_run, sim_config


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    return shared_sim_run(tmp_path_factory)


def _no_nan(token: str) -> Any:
    raise AssertionError(f"{token} in the JSON report: not valid JSON for other tools")


def report_json(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text, parse_constant=_no_nan)
    return data


def table_rows(markdown: str, first_cell: str) -> list[list[str]]:
    """The cells of the table rows that start with `first_cell`, split on unescaped pipes."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith(f"| {first_cell}"):
            cells, current, escaped = [], "", False
            for ch in line.strip()[1:-1]:
                if ch == "|" and not escaped:
                    cells.append(current.strip())
                    current = ""
                else:
                    current += ch
                escaped = ch == "\\" and not escaped
            rows.append([*cells, current.strip()])
    return rows


# --- markdown ------------------------------------------------------------------------------------


def test_markdown_summary_from_the_cli(sim_run: SimRun, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(sim_run.path), "--format", "markdown", "-o", "-"]) == 0
    text = capsys.readouterr().out
    data = sim_run.data
    assert text.startswith("# evalkit report: report-test (SIMULATED)\n")
    assert "> **SIMULATED RESULTS.**" in text
    scopes = [r for r in data.rows if r.kind != "scenario"]
    matrix_head = table_rows(text, "backend · model · mode")[0]
    comparisons_head = table_rows(text, "compared")[0]
    assert matrix_head == ["backend · model · mode", "strategy", *(r.label for r in scopes)]
    assert comparisons_head == ["compared", "shared", "scope", "A", "B", "A − B", "interval", "Holm p"]
    lines = [line for line in table_rows(text, "sim-") if line[0].endswith("(SIM)")]
    assert len(lines) == len(data.columns)
    for line, column in zip(lines, data.columns, strict=True):
        assert line[:2] == [f"{column.group} (SIM)", column.strategy]
        for shown, row in zip(line[2:], scopes, strict=True):
            cell = data.cell(row, column)
            assert cell is not None and cell.completed is not None and cell.correct is not None
            rate = cell.correct
            assert shown == (
                f"{rate.x}/{rate.n} = {rate.value * 100:.0f}% "
                f"[{rate.low * 100:.0f}–{rate.high * 100:.0f}] "
                f"c{cell.completed.value * 100:.0f}% r{cell.retries_mean:.1f}"
            )
    assert data.power is not None and f"**Power.** {data.power.summary}" in text
    significant = [c for c in data.comparisons if c.significant]
    assert f"{len(significant)} of {len(data.comparisons)} comparisons of correct rates" in text
    assert len(table_rows(text, "strategies |")) + len(table_rows(text, "models |")) == len(significant)
    assert "Not counted in rates: 0 infra-error runs, 0 unsupported runs." in text
    assert XSS_REPLY not in text and "<script>" not in text  # no transcripts, nothing raw


def test_markdown_escapes_table_syntax_and_html() -> None:
    runs = records.cell_runs(2, 4, strategy="a|b<i>", family="fam|x")
    text = render(build_report(records.results(runs, simulated=False), include_power=False), "markdown")
    (row,) = table_rows(text, "sim · m · native")
    assert row[:2] == ["sim · m · native", "a\\|b&lt;i&gt;"]
    assert len(row) == 2 + 2  # overall and the one family: the pipe in the name split nothing
    assert "SIMULATED" not in text and "(SIM)" not in text
    assert markdown_cell("x\ny|<z>") == "x y\\|&lt;z&gt;"


# --- JSON ----------------------------------------------------------------------------------------


def test_json_report_carries_the_report_data(sim_run: SimRun, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert main(["report", str(sim_run.path), "--format", "json", "-o", str(out)]) == 0
    doc, data = report_json(out.read_text(encoding="utf-8")), sim_run.data
    assert doc["schema"] == "evalkit-report/1" and doc["simulated"] is True
    assert [c["id"] for c in doc["columns"]] == [c.id for c in data.columns]
    assert all(c["simulated"] for c in doc["columns"]) and all(c["simulated"] for c in doc["cells"])
    assert len(doc["cells"]) == len(data.rows) * len(data.columns)
    rows = {r.id: r for r in data.rows}
    columns = {c.id: c for c in data.columns}
    for cell in doc["cells"]:
        stats = data.cell(rows[cell["row"]["id"]], columns[cell["column"]])
        assert stats is not None and stats.completed is not None
        assert cell["completed"] == {
            "x": stats.completed.x,
            "n": stats.completed.n,
            "low": stats.completed.low,
            "high": stats.completed.high,
        }
        assert cell["pass_k"] == list(stats.pass_k)
    assert [c["p_holm"] for c in doc["comparisons"]] == [c.p_holm for c in data.comparisons]
    assert data.power is not None and doc["power"]["summary"] == data.power.summary
    assert doc["power"]["n"] == data.power.n
    assert doc["total_runs"] == data.total_runs and doc["provenance"]["files"] == [str(sim_run.path)]
    text = out.read_text(encoding="utf-8")
    assert '"messages"' not in text and "alert(1)" not in text  # transcripts stay in the results file


def test_json_report_has_null_not_nan_for_missing_values() -> None:
    runs = [
        *records.cell_runs(3, 3),
        *(records.run(index=3 + i, outcome="unsupported", completed=False, strategy="grammar") for i in range(2)),
    ]
    doc = report_json(render(build_report(records.results(runs, simulated=False), include_power=False), "json"))
    assert doc["simulated"] is False and doc["power"] is None
    trust = next(c for c in doc["cells"] if c["row"]["kind"] == "overall" and c["column"] == "c1")
    assert trust["pass_k"][3:] == [None, None]  # pass^4 and pass^5 need 4 and 5 runs of a scenario
    grammar = next(c for c in doc["cells"] if c["row"]["kind"] == "overall" and c["column"] == "c0")
    assert grammar["completed"] is None and grammar["unsupported"] == 2


# --- shards --------------------------------------------------------------------------------------


def _shard_config() -> RunConfig:
    return sim_config(
        "sharded",
        ["casual_greeting/hi.yaml", "relevance_detection/capital_city.yaml"],
        runs=4,
        strategies={"trust_text": ["trust_text"], "retry_nudge": ["retry_nudge"]},
    )


def test_shards_merge_into_the_same_report_as_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _shard_config()
    whole = run_config(config, tmp_path / "whole.jsonl")
    small = run_config(config, tmp_path / "small.jsonl", only_backends={"sim-small"})
    strong = run_config(config, tmp_path / "strong.jsonl", only_backends={"sim-strong"})
    one = build_report(load_results([whole]), include_power=False)
    merged = build_report(load_results([small, strong]), include_power=False)
    assert len(load_results([small]).runs) == len(load_results([strong]).runs) == len(load_results([whole]).runs) // 2
    assert merged.columns == one.columns and merged.rows == one.rows
    assert merged.cells == one.cells
    assert merged.comparisons == one.comparisons
    assert merged.provenance.files == (str(small), str(strong))
    assert {b.label for b in merged.provenance.backends} == {"sim-small", "sim-strong"}
    # a run id in two shards (a copied or resumed file) counts once
    assert build_report(load_results([small, small, strong]), include_power=False).cells == one.cells
    assert main(["report", str(small), str(strong), "--format", "json", "-o", "-"]) == 0
    doc = report_json(capsys.readouterr().out)
    assert doc["provenance"]["files"] == [str(small), str(strong)]
    assert doc["total_runs"] == one.total_runs


# --- API keys ------------------------------------------------------------------------------------

ENV_KEY = "sk-evalkit-FAKE-env-4f1d9c2a7be3"
CONFIG_KEY = "sk-evalkit-FAKE-config-8a3e6d1f0c57"
HEADER_KEY = "sk-evalkit-FAKE-header-2b7c5e9a1d40"


def _all_formats(paths: list[Path]) -> dict[str, str]:
    data = build_report(load_results(paths), include_power=False)
    return {fmt: render(data, fmt) for fmt in FORMATS}


def test_api_keys_never_reach_results_or_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a real HTTP backend kind, given a key through the environment (the only way a config can give one),
    # pointed at a closed local port: the key goes into request headers, the runs end as infra errors
    # whose messages, like the header's provenance, come from the backend code that handles the key
    monkeypatch.setenv("EVALKIT_TEST_FAKE_KEY", ENV_KEY)
    config = RunConfig.model_validate(
        {
            "name": "keys",
            "runs": 2,
            "scenarios": [str(Path(__file__).parents[2] / "scenarios/casual_greeting/hi.yaml")],
            "backends": [
                {
                    "label": "api",
                    "kind": "openai",
                    "model": "gpt-test",
                    "url": "http://127.0.0.1:9/v1",
                    "api_key_env": "EVALKIT_TEST_FAKE_KEY",
                    "timeout_s": 5,
                    "retry": {"attempts": 1, "base_delay_s": 0},
                    "options": {"headers": {"Authorization": f"Bearer {CONFIG_KEY}"}, "api_key": CONFIG_KEY},
                },
                {"label": "sim", "kind": "sim", "model": "small-local", "api_key_env": "EVALKIT_TEST_FAKE_KEY"},
            ],
            "strategies": {"trust_text": ["trust_text"]},
        }
    )
    path = run_config(config, tmp_path / "keys.jsonl")
    results = load_results([path])
    assert {r.outcome for r in results.runs if r.cell.backend == "api"} == {"infra_error"}
    raw = path.read_text(encoding="utf-8")
    assert ENV_KEY not in raw and "EVALKIT_TEST_FAKE_KEY" in raw  # the variable's name, never its value
    assert CONFIG_KEY in raw  # a literal in the config is kept with the config: the reports must drop it
    for fmt, text in _all_formats([path]).items():
        assert ENV_KEY not in text and CONFIG_KEY not in text, fmt
        assert "gpt-test" in text, fmt  # the backend itself is reported


def test_provenance_drops_credential_fields_a_backend_recorded(tmp_path: Path) -> None:
    described = {
        "api": {
            "kind": "openai",
            "model": "m",
            "server_build": "b4567-abcdef",
            "api_key": HEADER_KEY,
            "headers": {"Authorization": f"Bearer {HEADER_KEY}", "x-api-key": HEADER_KEY, "user-agent": "evalkit"},
            "auth": {"token": HEADER_KEY},
            "session_cookie": HEADER_KEY,
            "password": HEADER_KEY,
            "env": {"OPENAI_API_KEY": HEADER_KEY},
        }
    }
    path = records.write_results(
        tmp_path / "described.jsonl", records.cell_runs(3, 4, backend="api"), backends=described
    )
    assert HEADER_KEY in path.read_text(encoding="utf-8")  # the schema lets a header hold anything
    for fmt, text in _all_formats([path]).items():
        assert HEADER_KEY not in text, fmt
    html = _all_formats([path])["html"]
    assert "b4567-abcdef" in html and "headers.user-agent" in html  # the harmless details stay
