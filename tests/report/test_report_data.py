"""Report data (`build_report`), checked against the runs it was built from.

The results come from the simulated backend, run for real into a JSONL file: two models (profiles),
three guard stacks, five scenarios in four families, six runs per cell. The `sim_run` fixture and
the helpers here are shared with the other report test modules.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit.report.cells import PASS_K
from evalkit.report.data import OVERALL, Column, ReportData, Row, build_report
from evalkit.report.power_statement import BASELINES, DROPS, NEEDED_AT_DEFAULTS, POWER, power_statement
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from evalkit.stats import averages, proportions, pvalues, sample_size
from evalkit.stats.rates import Rate
from tests.report import records

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = (
    "casual_greeting/hi.yaml",
    "casual_greeting/thanks.yaml",
    "sequential_reasoning/weather_trip.yaml",
    "relevance_detection/capital_city.yaml",
)
STRATEGIES: dict[str, list[Any]] = {
    "trust_text": ["trust_text"],
    "retry_nudge": ["retry_nudge"],
    "respond+nudge": ["respond_tool", "retry_nudge"],
}
BACKENDS = (("sim-small", "small-local"), ("sim-strong", "strong"))
RUNS = 6

# Untrusted text in three places a transcript shows: the model's reply, the model's call arguments
# and a tool result. The simulated model says what the scenario's reference says.
XSS_REPLY = "<script>alert(1)</script><img src=x onerror=alert(2)> done"
XSS_ARGUMENT = "<script>alert('args')</script>"
XSS_TOOL = "<img src=x onerror=alert('tool')>"
XSS_SCENARIO = f"""\
id: xss-probe
family: action_completion
description: Model output and tool data that look like HTML must be shown as text.
system: You are a helper with a notes tool.
turns:
  - "Look up the release note and tell me what it says."
tools:
  - name: lookup_note
    description: Look up a note.
    parameters: {{type: object, properties: {{q: {{type: string}}}}, required: [q]}}
    results:
      - returns: {{note: "{XSS_TOOL}"}}
reference:
  calls:
    - {{name: lookup_note, arguments: {{q: "{XSS_ARGUMENT}"}}}}
  reply: "{XSS_REPLY}"
check:
  calls:
    required: [{{name: lookup_note}}]
  reply: {{contains: [done]}}
"""


def write_xss_scenario(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "xss_probe.yaml"
    path.write_text(XSS_SCENARIO, encoding="utf-8")
    return path


def sim_config(
    name: str,
    scenarios: Iterable[str | Path],
    *,
    runs: int = RUNS,
    seed: int = 7,
    backends: Sequence[tuple[str, str]] = BACKENDS,
    strategies: dict[str, list[Any]] | None = None,
    modes: Sequence[str] = ("native",),
    **backend_fields: Any,
) -> RunConfig:
    """A run config on the simulated backend; scenario paths relative to scenarios/ or absolute."""
    paths = [str(p if Path(p).is_absolute() else ROOT / "scenarios" / p) for p in scenarios]
    return RunConfig.model_validate(
        {
            "name": name,
            "seed": seed,
            "runs": runs,
            "scenarios": paths,
            "modes": list(modes),
            "backends": [
                {"label": label, "kind": "sim", "model": model, **backend_fields} for label, model in backends
            ],
            "strategies": strategies or STRATEGIES,
        }
    )


@dataclass(frozen=True)
class SimRun:
    path: Path
    results: Results
    data: ReportData


_SIM_RUNS: dict[int, SimRun] = {}  # per pytest session (its tmp_path_factory)


def shared_sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    if id(tmp_path_factory) not in _SIM_RUNS:
        _SIM_RUNS[id(tmp_path_factory)] = _shared_sim_run(tmp_path_factory)
    return _SIM_RUNS[id(tmp_path_factory)]


def _shared_sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    """Run once per session; each report test module has a `sim_run` fixture that calls this."""
    folder = tmp_path_factory.mktemp("sim")
    config = sim_config("report-test", [*SCENARIOS, write_xss_scenario(folder)])
    path = run_config(config, folder / "report-test.jsonl")
    results = load_results([path])
    return SimRun(path, results, build_report(results, generated_at="2026-01-01T00:00:00+00:00"))


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    return shared_sim_run(tmp_path_factory)


# --- recounting from the runs -------------------------------------------------------------------


def runs_in(results: Results, row: Row, column: Column) -> list[RunRecord]:
    def in_row(run: RunRecord) -> bool:
        return (
            row.kind == "overall"
            or (row.kind == "family" and run.cell.family == row.family)
            or run.cell.scenario == row.scenario
        )

    return [
        r
        for r in results.runs
        if in_row(r)
        and (r.cell.backend, r.cell.model, r.cell.mode, r.cell.strategy)
        == (column.backend, column.model, column.mode, column.strategy)
    ]


def expected_rate(runs: Sequence[RunRecord], test: Callable[[RunRecord], bool], method: str = "wilson") -> Rate:
    counted = [r for r in runs if r.counted]
    x = sum(1 for r in counted if test(r))
    interval = (
        proportions.clopper_pearson(x, len(counted))
        if method == "clopper-pearson"
        else proportions.wilson(x, len(counted))
    )
    return Rate(x, len(counted), interval.low, interval.high)


def test_columns_are_backend_model_mode_strategy_in_config_order(sim_run: SimRun) -> None:
    columns = sim_run.data.columns
    expected = [(label, model, "native", strategy) for label, model in BACKENDS for strategy in STRATEGIES]
    assert [(c.backend, c.model, c.mode, c.strategy) for c in columns] == expected
    assert [c.id for c in columns] == [f"c{i}" for i in range(len(expected))]
    assert columns[0].label == "sim-small · small-local · native · trust_text"
    assert all(c.simulated for c in columns)


def test_rows_are_overall_then_each_family_followed_by_its_scenarios(sim_run: SimRun) -> None:
    rows = [(r.kind, r.family, r.scenario, r.label) for r in sim_run.data.rows]
    assert rows == [
        ("overall", "", "", OVERALL),
        ("family", "action_completion", "", "action_completion"),
        ("scenario", "action_completion", "xss-probe", "xss-probe"),
        ("family", "casual_greeting", "", "casual_greeting"),
        ("scenario", "casual_greeting", "greet-hi", "greet-hi"),
        ("scenario", "casual_greeting", "greet-thanks", "greet-thanks"),
        ("family", "relevance_detection", "", "relevance_detection"),
        ("scenario", "relevance_detection", "rel-capital-city", "rel-capital-city"),
        ("family", "sequential_reasoning", "", "sequential_reasoning"),
        ("scenario", "sequential_reasoning", "seq-weather-trip", "seq-weather-trip"),
    ]
    assert [r.id for r in sim_run.data.rows] == [f"r{i}" for i in range(len(rows))]


def test_every_cell_recounts_from_the_runs_with_wilson_intervals(sim_run: SimRun) -> None:
    data, results = sim_run.data, sim_run.results
    seen_values = set()
    for row in data.rows:
        for column in data.columns:
            runs = runs_in(results, row, column)
            cell = data.cell(row, column)
            assert cell is not None and cell.runs == len(runs)
            assert cell.completed == expected_rate(runs, lambda r: r.completed)
            assert cell.correct == expected_rate(runs, lambda r: r.correct)
            assert cell.first_try == expected_rate(runs, lambda r: r.first_try)
            assert cell.guard_fired == expected_rate(runs, lambda r: r.guard_fires > 0)
            assert cell.retries_mean == pytest.approx(np.mean([r.retries for r in runs]))
            assert cell.simulated
            seen_values.add(cell.completed.value)
    assert len(seen_values) > 3  # the simulated model passes some cells, fails others: not a trivial matrix
    overall = data.rows[0]
    assert data.cell(overall, data.columns[0]).completed.n == 5 * RUNS  # type: ignore[union-attr]
    assert data.total_runs == data.counted_runs == len(results.runs) == len(BACKENDS) * len(STRATEGIES) * 5 * RUNS


def test_family_rows_pool_their_scenarios(sim_run: SimRun) -> None:
    data = sim_run.data
    for column in data.columns:
        family = next(r for r in data.rows if r.family == "casual_greeting" and r.kind == "family")
        parts = [data.cell(r, column) for r in data.rows if r.kind == "scenario" and r.family == "casual_greeting"]
        pooled = data.cell(family, column)
        assert pooled is not None and pooled.completed is not None and len(parts) == 2
        rates = [p.completed for p in parts if p is not None and p.completed is not None]
        assert pooled.completed.x == sum(r.x for r in rates)
        assert pooled.completed.n == sum(r.n for r in rates) == 2 * RUNS


def test_clopper_pearson_is_an_option(sim_run: SimRun) -> None:
    exact = build_report(sim_run.results, interval_method="clopper-pearson", include_power=False)
    differs = False
    for row in exact.rows:
        for column in exact.columns:
            cell = exact.cell(row, column)
            assert cell is not None
            assert cell.completed == expected_rate(
                runs_in(sim_run.results, row, column), lambda r: r.completed, "clopper-pearson"
            )
            differs |= cell.completed != sim_run.data.cell(row, column).completed  # type: ignore[union-attr]
    assert differs
    assert exact.interval_method == "clopper-pearson"


def test_pass_hat_k_is_per_scenario_and_falls_with_k(sim_run: SimRun) -> None:
    data, results = sim_run.data, sim_run.results
    for row in data.rows:
        for column in data.columns:
            per_scenario: dict[str, list[bool]] = defaultdict(list)
            for run in runs_in(results, row, column):
                per_scenario[run.cell.scenario].append(run.correct)
            counts = [(sum(v), len(v)) for v in per_scenario.values()]
            cell = data.cell(row, column)
            assert cell is not None and len(cell.pass_k) == len(PASS_K)
            assert cell.pass_k == tuple(pytest.approx(averages.pass_hat_k(counts, k)) for k in PASS_K)
            values = [v for v in cell.pass_k if v is not None]
            assert values == sorted(values, reverse=True)
            # pass^1 is the mean of the scenarios' correct rates (equal runs per scenario: the pooled rate)
            assert cell.pass_k[0] == pytest.approx(cell.correct.value)  # type: ignore[union-attr]


def test_retries_bootstrap_interval_is_seeded_and_brackets_the_mean(sim_run: SimRun) -> None:
    data = sim_run.data
    again = build_report(sim_run.results, generated_at="2026-01-01T00:00:00+00:00")
    assert again == data  # a pure function of its inputs
    other_seed = build_report(sim_run.results, seed=99, include_power=False)
    moved = False
    for row in data.rows:
        for column in data.columns:
            cell, other = data.cell(row, column), other_seed.cell(row, column)
            assert cell is not None and other is not None and cell.retries_interval is not None
            assert cell.retries_interval.low <= cell.retries_mean <= cell.retries_interval.high  # type: ignore[operator]
            moved |= cell.retries_interval != other.retries_interval
            assert other.retries_mean == cell.retries_mean
    assert moved  # the interval really comes from a resampling that the seed drives


def test_drilldowns_show_failed_runs_by_category_and_one_passing(sim_run: SimRun) -> None:
    data, results = sim_run.data, sim_run.results
    scenario_rows = [r for r in data.rows if r.kind == "scenario"]
    assert len(data.drilldowns) == len(scenario_rows) * len(data.columns)
    for d in data.drilldowns:
        runs = runs_in(results, d.row, d.column)
        failed = [r for r in runs if not r.correct]
        assert d.failed_total == len(failed)
        assert len(d.failed) == min(3, len(failed))
        assert all(not t.correct for t in d.failed)
        categories = {r.failure for r in failed}
        assert len({t.failure for t in d.failed}) == min(3, len(categories))  # one per category first
        passing = [r for r in runs if r.correct]
        assert (d.passing.index if d.passing else None) == (min(r.index for r in passing) if passing else None)
        for t in (*d.failed, *([d.passing] if d.passing else [])):
            run = next(r for r in runs if r.run_id == t.run_id)
            assert len(t.messages) == len(run.messages)


def test_paired_strategy_comparisons_use_mcnemar_and_holm_across_all(sim_run: SimRun) -> None:
    data, results = sim_run.data, sim_run.results
    scopes = [r for r in data.rows if r.kind != "scenario"]
    strategy_pairs = [c for c in data.comparisons if c.kind == "strategy"]
    model_pairs = [c for c in data.comparisons if c.kind == "model"]
    assert len(strategy_pairs) == len(BACKENDS) * len(scopes) * len(list(combinations(STRATEGIES, 2)))
    assert len(model_pairs) == len(STRATEGIES) * len(scopes) * len(list(combinations(BACKENDS, 2)))
    by_key = {(c.group, c.scope, c.a, c.b): c for c in strategy_pairs}
    for column_a, column_b in combinations(data.columns, 2):
        if column_a.group != column_b.group:
            continue
        for row in scopes:
            c = by_key[(column_a.group, row.label, column_a.strategy, column_b.strategy)]
            a = {(r.cell.scenario, r.index, r.seed): r.correct for r in runs_in(results, row, column_a)}
            b = {(r.cell.scenario, r.index, r.seed): r.correct for r in runs_in(results, row, column_b)}
            assert a.keys() == b.keys()  # the runner gives every strategy the same seeds
            discordant = (sum(a[k] and not b[k] for k in a), sum(b[k] and not a[k] for k in a))
            assert c.test.startswith("McNemar") and c.discordant == discordant
            assert c.p == pytest.approx(pvalues.mcnemar(*discordant, alternative="two-sided"))
            assert c.difference == proportions.newcombe(c.a_rate.x, c.a_rate.n, c.b_rate.x, c.b_rate.n)
    assert [c.p_holm for c in data.comparisons] == pytest.approx(pvalues.holm([c.p for c in data.comparisons]))
    assert all(c.significant == (c.p_holm <= data.alpha) for c in data.comparisons)
    assert any(c.significant for c in data.comparisons)
    assert any(c.p <= data.alpha and not c.significant for c in data.comparisons)  # Holm made a difference


def test_unpaired_strategies_are_compared_with_boschloo() -> None:
    runs = [*records.cell_runs(10, 10, strategy="a"), *records.cell_runs(3, 8, strategy="b")]
    data = build_report(records.results(runs), include_power=False)
    assert [c.scope for c in data.comparisons] == [OVERALL, "fam"]  # one family: the same runs twice
    p = pvalues.boschloo(10, 10, 3, 8, alternative="two-sided")
    for c in data.comparisons:
        assert (c.a, c.b, c.test, c.discordant) == ("a", "b", "Boschloo exact", None)
        assert c.p == pytest.approx(p)
        assert c.p_holm == pytest.approx(min(1.0, 2 * p)) and c.significant == (2 * p <= 0.05)


def test_power_statement_for_the_typical_n(sim_run: SimRun) -> None:
    power = sim_run.data.power
    assert power is not None and power.n == RUNS and power.alpha == 0.05
    assert [line.baseline for line in power.detectable] == list(BASELINES)
    for line in power.detectable:
        assert line.boschloo == sample_size.detectable_rate(RUNS, line.baseline)
        assert line.fisher == sample_size.detectable_rate(RUNS, line.baseline, test="fisher")
        assert line.mcnemar == sample_size.detectable_rate(RUNS, line.baseline, test="mcnemar")
    # the simulated runs pair across strategies (same seeds), so comparisons and power use McNemar
    assert power.paired and "McNemar" in power.summary
    assert [(line.baseline, line.candidate) for line in power.needed] == list(DROPS)
    assert build_report(sim_run.results, include_power=False).power is None


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_the_sample_sizes_needed_are_what_the_exact_search_finds(alpha: float) -> None:
    """At the default α they come from power.NEEDED_AT_DEFAULTS (the search costs a report 0.3 s): the
    table must hold what `n_needed` computes. Elsewhere they are computed."""
    assert (0.05, POWER) in NEEDED_AT_DEFAULTS
    for line, (b, c) in zip(power_statement(25, alpha).needed, DROPS, strict=True):
        computed = sample_size.n_needed(b, c, alpha=alpha, power=POWER)
        assert (line.needed.n, line.needed.exact) == (computed.n, computed.exact)
        assert line.needed.power == pytest.approx(computed.power, rel=1e-9)


def test_power_statement_at_25_runs_matches_the_reference_values() -> None:
    power = power_statement(25)
    assert power.detectable[0].boschloo == pytest.approx(0.79, abs=0.003)
    assert power.detectable[0].fisher == pytest.approx(0.746, abs=0.002)
    needed = {(line.baseline, line.candidate): line.needed for line in power.needed}
    assert needed[(1.0, 0.8)].n == 27 and needed[(1.0, 0.8)].exact
    assert "With 25 runs per cell" in power.summary and "79%" in power.summary and "Boschloo" in power.summary


def test_power_statement_on_paired_runs_uses_the_gates_mcnemar_power() -> None:
    # before: the report gave Boschloo's power (0.766 at 1.0 -> 0.8, N = 25) where the gate uses
    # McNemar on paired runs (0.579)
    paired = power_statement(25, paired=True)
    rate = paired.detectable[0].mcnemar
    assert rate is not None and sample_size.mcnemar_power(25, 1.0, rate) >= 0.8 > sample_size.mcnemar_power(
        25, 1.0, rate + 0.01
    )
    assert sample_size.mcnemar_power(25, 1.0, 0.8) == pytest.approx(0.579, abs=0.001)
    assert f"{rate:.0%}" in paired.summary and "McNemar" in paired.summary


def test_infra_errors_and_unsupported_runs_are_counted_apart() -> None:
    runs = [
        *records.cell_runs(20, 22),
        *(
            records.run(index=22 + i, outcome="infra_error", completed=False, error="HTTP 503 from the server")
            for i in range(3)
        ),
        *(records.run(index=i, outcome="unsupported", completed=False, strategy="grammar") for i in range(5)),
    ]
    data = build_report(records.results(runs), include_power=False)
    overall = data.rows[0]
    trust, grammar = data.columns[1], data.columns[0]  # sorted by name: no config order in these records
    assert (trust.strategy, grammar.strategy) == ("trust_text", "grammar")
    cell = data.cell(overall, trust)
    assert cell is not None and (cell.runs, cell.counted, cell.infra_errors) == (25, 22, 3)
    assert cell.completed == Rate(20, 22, proportions.wilson(20, 22).low, proportions.wilson(20, 22).high)
    unsupported = data.cell(overall, grammar)
    assert unsupported is not None and unsupported.completed is None and unsupported.fully_unsupported
    assert (data.total_runs, data.counted_runs) == (30, 22)
    assert [(n.column.strategy, n.runs, n.infra_errors, n.unsupported, n.example_error) for n in data.not_counted] == [
        ("grammar", 5, 0, 5, None),
        ("trust_text", 25, 3, 0, "HTTP 503 from the server"),
    ]


def test_simulated_flag_follows_the_runs() -> None:
    real = build_report(records.results(records.cell_runs(5, 5), simulated=False), include_power=False)
    assert not real.simulated and not any(c.simulated for c in real.columns)
    mixed_runs = [*records.cell_runs(5, 5), *records.cell_runs(4, 5, backend="sim2", simulated=True)]
    mixed = build_report(records.results(mixed_runs), include_power=False)
    assert mixed.simulated
    assert [(c.backend, c.simulated) for c in mixed.columns] == [("sim", False), ("sim2", True)]


def test_report_data_is_plain_frozen_dataclasses(sim_run: SimRun) -> None:
    data = sim_run.data
    assert dataclasses.is_dataclass(data)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.title = "changed"  # type: ignore[misc]
    assert data.generated_at == "2026-01-01T00:00:00+00:00"
    assert build_report(sim_run.results, include_power=False).generated_at is None  # never reads a clock
