"""The regression gate (`evalkit.gate.compare` and its renderers) on simulated and hand-made results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evalkit.errors import GateInputError
from evalkit.gate.comparison import compare
from evalkit.gate.config import FloorRule, GateConfig
from evalkit.gate.outcome import GateResult
from evalkit.gate.render import render_junit, render_markdown, render_text
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.runs import Results
from evalkit.run.runner import run_config
from evalkit.stats import pvalues
from evalkit.stats.gate_tests import REGISTRY, detectable_drop
from tests.report import records
from tests.report.test_report_data import sim_config

GATE_SCENARIOS = (
    "casual_greeting/hi.yaml",
    "sequential_reasoning/weather_trip.yaml",
    "relevance_detection/capital_city.yaml",
    "data_gap_recovery/missing_date.yaml",
)
GATE_STRATEGIES: dict[str, list[Any]] = {"trust_text": ["trust_text"], "retry_nudge": ["retry_nudge"]}
GATE_RUNS = 20


def gate_results(
    folder: Path,
    name: str,
    *,
    profile: str = "small-local",
    seed: int = 11,
    scenarios: Sequence[str] = GATE_SCENARIOS,
    runs: int = GATE_RUNS,
) -> Path:
    """A results file from the simulated backend under the label `sim`, whatever the profile."""
    config = sim_config(name, scenarios, runs=runs, seed=seed, backends=[("sim", profile)], strategies=GATE_STRATEGIES)
    return run_config(config, folder / f"{name}.jsonl")


@dataclass(frozen=True)
class Sims:
    baseline: Path
    rerun: Path  # the same config again: the same seeds, the same outcomes
    degraded: Path  # the same seeds on the degraded profile
    reseeded: Path  # the baseline's profile on other seeds: no pairs


_SIMS: dict[int, Sims] = {}  # per pytest session (its tmp_path_factory)


def shared_sims(tmp_path_factory: pytest.TempPathFactory) -> Sims:
    if id(tmp_path_factory) not in _SIMS:
        _SIMS[id(tmp_path_factory)] = _shared_sims(tmp_path_factory)
    return _SIMS[id(tmp_path_factory)]


def _shared_sims(tmp_path_factory: pytest.TempPathFactory) -> Sims:
    """Run once per session; the gate test modules' `sims` fixtures call this."""
    folder = tmp_path_factory.mktemp("gate")
    return Sims(
        gate_results(folder, "baseline"),
        gate_results(folder, "rerun"),
        gate_results(folder, "degraded", profile="small-local-degraded"),
        gate_results(folder, "reseeded", seed=12),
    )


@pytest.fixture(scope="session")
def sims(tmp_path_factory: pytest.TempPathFactory) -> Sims:
    return shared_sims(tmp_path_factory)


def load(path: Path) -> Results:
    return load_results([path])


def pairs(base: Results, cand: Results, strategy: str) -> tuple[int, int]:
    """(lost, gained) over runs paired by scenario, index and seed."""

    def outcomes(results: Results) -> dict[tuple[str, int, int], bool]:
        return {(r.cell.scenario, r.index, r.seed): r.completed for r in results.runs if r.cell.strategy == strategy}

    b, c = outcomes(base), outcomes(cand)
    assert b.keys() == c.keys()
    return sum(b[k] and not c[k] for k in b), sum(c[k] and not b[k] for k in b)


# --- simulated baseline and candidates -------------------------------------------------------------


def test_a_candidate_equal_to_the_baseline_passes(sims: Sims) -> None:
    result = compare(load(sims.baseline), load(sims.rerun))
    assert result.passed and result.failed == ()
    assert (result.level, result.metric) == ("scenario", "correct")  # the defaults
    assert len(result.cells) == len(GATE_SCENARIOS) * len(GATE_STRATEGIES)
    assert {v.name.rsplit("/", 1)[0] for v in result.cells} == {"sim/native/retry_nudge", "sim/native/trust_text"}
    for v in result.cells:
        assert v.test.startswith("McNemar exact, paired (0 lost, 0 gained)")
        assert (v.p, v.p_holm, v.difference.estimate) == (1.0, 1.0, 0.0)
        assert v.baseline == v.candidate and v.baseline.n == GATE_RUNS
    assert [n.split(":")[0] for n in result.notes] == ["power"] and result.simulated
    assert render_text(result).startswith(
        "evalkit gate: PASS — 0 regressed, 8 passed (no margin set: a pass means not shown worse) "
        "(metric correct; level scenario"
    )


def test_a_degraded_candidate_fails_and_says_which_cells_and_why(sims: Sims) -> None:
    base, cand = load(sims.baseline), load(sims.degraded)
    result = compare(base, cand, GateConfig(level="cell", metric="completed"))
    assert not result.passed
    assert result.notes[0] == "model changed: small-local → small-local-degraded (sim)"
    failed = {v.name: v for v in result.failed}
    assert set(failed) == {"sim/native/trust_text", "sim/native/retry_nudge"}
    adjusted = pvalues.holm([v.p for v in result.cells])
    for i, v in enumerate(result.cells):
        lost, gained = pairs(base, cand, v.name.split("/")[-1])
        assert lost > gained
        assert v.test == f"McNemar exact, paired ({lost} lost, {gained} gained)"
        assert v.p == pytest.approx(pvalues.mcnemar(lost, gained))
        assert v.p_holm == pytest.approx(adjusted[i]) and v.p_holm <= 0.05
        (reason,) = v.reasons
        assert reason.startswith(f"completed rate dropped {v.baseline.value:.0%} → {v.candidate.value:.0%}")
        assert "90% CI" in reason  # the two-sided interval that matches a one-sided test at α = 0.05
        assert f"p = {v.p:.4f}, Holm-adjusted {v.p_holm:.4f} ≤ α = 0.05" in reason
        assert "largest drops: " in reason and v.worst and all(" → " in w for w in v.worst)
        # the paired interval the test itself gives, which excludes 0 since the cell failed
        assert v.difference.estimate == pytest.approx(v.candidate.value - v.baseline.value)
        assert v.difference.low <= v.difference.estimate <= v.difference.high < 0
    text = render_text(result)
    assert text.startswith("evalkit gate: FAIL — 2 regressed (McNemar exact, paired), 0 passed")
    for name, v in failed.items():
        assert (
            f"FAIL {name} (family all, scenario all scenarios pooled, model small-local → small-local-degraded, "
            f"strategy {v.strategy}, backend sim, mode native)\n     - {v.reasons[0]}"
        ) in text


def test_scenario_level_compares_each_scenario_and_holm_spares_a_lone_drop(sims: Sims) -> None:
    result = compare(load(sims.baseline), load(sims.degraded), GateConfig(level="scenario", metric="completed"))
    assert len(result.cells) == len(GATE_SCENARIOS) * len(GATE_STRATEGIES)
    assert all(v.name.count("/") == 3 and v.worst == () for v in result.cells)
    assert [v.p_holm for v in result.cells] == pytest.approx(pvalues.holm([v.p for v in result.cells]))
    # at least one scenario is significant on its own and not after Holm's correction over 8 cells
    spared = [v for v in result.cells if v.p <= 0.05 < v.p_holm]
    assert spared and not any(v.failed for v in spared)
    assert result.passed == all(v.p_holm > 0.05 for v in result.cells)


def test_unpaired_runs_use_boschloo_or_fisher(sims: Sims) -> None:
    base, other = load(sims.baseline), load(sims.reseeded)
    result = compare(base, other)
    assert result.passed
    for v in result.cells:
        assert v.test == "Boschloo exact"
        assert v.p == pytest.approx(pvalues.boschloo(v.baseline.x, v.baseline.n, v.candidate.x, v.candidate.n))
    for v in compare(base, other, GateConfig(test="fisher")).cells:
        assert v.test == "Fisher exact"
        assert v.p == pytest.approx(pvalues.fisher(v.baseline.x, v.baseline.n, v.candidate.x, v.candidate.n))
    forced = compare(base, load(sims.degraded), GateConfig(pairing="unpaired"))
    assert {v.test for v in forced.cells} == {"Boschloo exact"}  # pairs exist, but were not asked for
    with pytest.raises(GateInputError, match="do not pair up by scenario, index and seed"):
        compare(base, other, GateConfig(pairing="paired"))


# --- hand-made results: exact control over counts ----------------------------------------------


def cells(specs: dict[str, tuple[int, int]], *, seed: int | None = None, **fields: Any) -> list[RunRecord]:
    """Runs for strategies: name → (passes, n). `seed` set: every run gets it, so runs do not pair."""
    return [
        r for strategy, (x, n) in specs.items() for r in records.cell_runs(x, n, strategy=strategy, seed=seed, **fields)
    ]


def gate(base: list[RunRecord], cand: list[RunRecord], config: GateConfig | None = None) -> GateResult:
    """Hand-made strategy cells: pooled per strategy column unless the config says otherwise."""
    return compare(records.results(base), records.results(cand), config or GateConfig(level="cell"))


def test_holm_across_cells_decides_not_the_raw_p() -> None:
    drop = {"a": (25, 25)}, {"a": (20, 25)}  # unpaired Boschloo one-sided p = 0.0164
    alone = gate(cells(drop[0]), cells(drop[1], seed=7))
    (v,) = alone.cells
    assert v.p == pytest.approx(pvalues.boschloo(25, 25, 20, 25)) and v.p == pytest.approx(0.0164, abs=2e-4)
    assert v.failed
    steady = {"b": (25, 25), "c": (25, 25), "d": (25, 25)}
    among = gate(cells(drop[0] | steady), cells(drop[1] | steady, seed=7))
    a = next(v for v in among.cells if v.name.endswith("/a"))
    assert a.p == v.p and a.p_holm == pytest.approx(min(1.0, 4 * v.p))  # 0.066 > α
    assert among.passed and not a.reasons
    assert "Holm across 4 cells" in render_text(among)


def test_mcnemar_when_paired_with_holm() -> None:
    base, cand = cells({"a": (25, 25)}), cells({"a": (20, 25)})  # the same indices and seeds: pairs
    (v,) = gate(base, cand).cells
    assert v.test == "McNemar exact, paired (5 lost, 0 gained)" and v.p == pytest.approx(0.5**5) and v.failed
    two = gate(base + cells({"b": (25, 25)}), cand + cells({"b": (25, 25)}))
    assert [x.p_holm for x in two.cells] == pytest.approx([2 * 0.5**5, 1.0])
    assert two.passed


def test_floor_is_a_one_sided_exact_binomial_test_holm_across_cells() -> None:
    perfect = cells({"a": (25, 25)})
    assert gate(perfect, perfect, GateConfig(level="cell", floor=0.99)).passed  # 25/25 shows no rate under 99%
    low = cells({"a": (18, 25)})
    (v,) = gate(low, low, GateConfig(level="cell", floor=0.9)).cells
    assert v.floor_p == pytest.approx(sps.binomtest(18, 25, 0.9, alternative="less").pvalue, rel=1e-12)
    assert v.reasons == (
        f"correct rate 18/25 is under the floor 90%: one-sided exact binomial p = {v.floor_p:.4f}, "
        f"Holm-adjusted {2 * v.floor_p:.4f} ≤ α = 0.05",  # one family: the drop test and the floor test
    )
    assert gate(cells({"a": (21, 25)}), cells({"a": (21, 25)}), GateConfig(level="cell", floor=0.9)).passed
    # two cells with floors: one Holm family of four tests (two drops, two floors)
    two = cells({"a": (18, 25), "b": (25, 25)})
    a, b = gate(two, two, GateConfig(level="cell", floor=0.9)).cells
    assert a.floor_p_holm == pytest.approx(min(1.0, 4 * (a.floor_p or 0))) and b.floor_p_holm == 1.0


@pytest.mark.parametrize("n", [10, 25, 50])
@pytest.mark.parametrize("floor", [0.5, 0.8, 0.9, 0.95])
def test_a_cell_at_its_floor_fails_at_most_alpha_of_the_time(n: int, floor: float) -> None:
    """The false-failure rate of the floor rule, exactly: P(reject | true rate = floor) ≤ α."""
    rejected = [x for x in range(n + 1) if pvalues.floor_pvalue(x, n, floor) <= 0.05]
    assert sps.binom.pmf(rejected, n, floor).sum() <= 0.05
    below = floor - 0.3
    assert rejected and sps.binom.pmf(rejected, n, below).sum() > 0.05  # and it has power below the floor


def test_a_floor_that_cannot_fail_at_this_n_is_a_warning() -> None:
    runs = cells({"a": (2, 25)})
    result = gate(runs, runs, GateConfig(level="cell", floor=0.1))  # even 0/25 has p = 0.9^25 = 0.072
    assert result.passed and result.warnings == (
        "floor 10% cannot fail a cell of 25 runs: even 0/25 is not significantly under it at α/2; run more runs "
        "per cell",
    )
    assert any(note.startswith('floor: one-sided exact binomial test of "rate ≥ floor"') for note in result.notes)
    assert "warning: floor 10% cannot fail" in render_text(result)


def test_per_cell_floors_first_matching_rule_and_strictest_when_pooled() -> None:
    base = cells({"guarded": (20, 25), "plain": (20, 25)})
    rules = [FloorRule(strategy="guard*", floor=0.95), FloorRule(strategy="*", floor=0.5)]
    result = gate(base, base, GateConfig(level="cell", floors=rules))
    assert [(v.name, v.floor, v.failed) for v in result.cells] == [
        ("sim/native/guarded", 0.95, True),
        ("sim/native/plain", 0.5, False),
    ]
    # pooled over two scenarios with different floors: the stricter one applies to the cell
    pooled = [*records.cell_runs(25, 25, scenario="s1"), *records.cell_runs(20, 25, scenario="s2")]
    config = GateConfig(level="cell", floors=[FloorRule(scenario="s2", floor=0.97)], floor=0.5)
    (v,) = gate(pooled, pooled, config).cells
    assert v.floor == 0.97 and v.floor_p == pytest.approx(sps.binom.cdf(45, 50, 0.97)) and v.failed


def test_infra_errors_over_the_limit_make_the_input_unusable() -> None:
    base = records.cell_runs(25, 25)

    def with_infra(k: int) -> list[RunRecord]:
        return [
            *records.cell_runs(25 - k, 25 - k),
            *(records.run(index=25 - k + i, outcome="infra_error", completed=False) for i in range(k)),
        ]

    (v,) = gate(base, with_infra(2)).cells  # 8%: allowed, and left out of the rates
    assert v.candidate.n == 23
    with pytest.raises(GateInputError, match=r"sim/native/trust_text: 3 of 25 candidate runs are infra errors"):
        gate(base, with_infra(3))  # 12% > 10%
    assert gate(base, with_infra(3), GateConfig(max_infra_error_rate=0.2)).passed
    dead = gate(base, with_infra(25), GateConfig(level="cell", max_infra_error_rate=1.0))
    assert not dead.cells and dead.exit_code == 4
    assert dead.unjudged == (
        ("sim/native/trust_text", "no counted runs on both sides (candidate: 25 infra errors of 25 runs)"),
    )


def issue_input(infra_side: str) -> tuple[list[RunRecord], list[RunRecord]]:
    """Nine scenarios at 25/25 and a tenth whose 25 runs on one side are all infra errors while the
    other side's fail (10% of the column: allowed)."""
    steady = [r for i in range(9) for r in records.cell_runs(25, 25, scenario=f"s{i}")]
    broken = [records.run(index=i, scenario="s9", outcome="infra_error", completed=False) for i in range(25)]
    failing = records.cell_runs(0, 25, scenario="s9")
    return (steady + broken, steady + failing) if infra_side == "baseline" else (steady + failing, steady + broken)


@pytest.mark.parametrize("infra_side", ["baseline", "candidate"])
@pytest.mark.parametrize("level", ["scenario", "family", "cell"])
@pytest.mark.parametrize("seed", [None, 7])  # paired runs, or no pairs
def test_infra_errors_in_one_scenario_do_not_change_the_mix(infra_side: str, level: str, seed: int | None) -> None:
    base, cand = issue_input(infra_side)
    if seed is not None:
        cand = [r.model_copy(update={"seed": seed}) for r in cand]
    result = gate(base, cand, GateConfig(level=level))
    assert not result.failed, render_text(result)
    if level == "scenario":  # the cell is all infra errors on one side: not judged, and said so
        assert len(result.cells) == 9 and result.unjudged == (
            (
                "sim/native/trust_text/s9",
                f"25 of 25 {infra_side} runs are infra errors, more than max_infra_error_rate 10% in this cell",
            ),
        )
    else:
        assert result.passed
        (v,) = result.cells
        assert (v.baseline.x, v.baseline.n, v.candidate.x, v.candidate.n) == (225, 225, 225, 225)
        sides = "225 runs per side" if seed is not None else "225 pairs"
        assert result.notes[-1].startswith(f"power: 1 cell(s) with {sides}")  # large N: stated too
        assert result.notes[:-1] == (
            f"{v.name}: compared 225 runs per side, like with like; left out "
            f"{25 * (infra_side == 'candidate')} baseline and {25 * (infra_side == 'baseline')} "
            "candidate counted runs whose counterpart was an infra error; scenarios without "
            "counted runs on one side: s9",
        )


def test_mismatched_cells_and_scenarios_are_not_judged() -> None:
    base = cells({"a": (5, 5), "b": (5, 5)})
    assert gate(base, cells({"a": (5, 5)})).unjudged == (("sim/native/b", "missing in the candidate"),)
    extra = gate(base, cells({"a": (5, 5), "b": (5, 5), "c": (5, 5)}))
    assert extra.unjudged == (("sim/native/c", "not in the baseline"),) and extra.exit_code == 4
    two = [*records.cell_runs(5, 5, scenario="s1"), *records.cell_runs(5, 5, scenario="s2")]
    one = records.cell_runs(5, 5, scenario="s1")
    assert gate(two, one, GateConfig(level="scenario")).unjudged == (
        ("sim/native/trust_text/s2", "missing in the candidate"),
    )
    # pooled per cell, a candidate that skipped a scenario must not be compared either
    ((name, why),) = gate(two, one).unjudged
    assert name == "sim/native/trust_text" and "ran different scenarios (only in the baseline: s2)" in why
    with pytest.raises(GateInputError, match="the candidate has no runs"):
        gate(base, [])
    with pytest.raises(GateInputError, match="the baseline has no runs"):
        gate([], base)


def test_unsupported_cells() -> None:
    base = cells({"a": (5, 5)})
    unsupported = [records.run(index=i, outcome="unsupported", completed=False, strategy="grammar") for i in range(5)]
    result = gate(base + unsupported, base + unsupported)
    assert result.skipped == (("sim/native/grammar", "unsupported on both sides"),)
    assert [v.name for v in result.cells] == ["sim/native/a"]
    assert "not compared (unsupported on both sides): sim/native/grammar" in render_text(result)
    one_side = gate(base + cells({"grammar": (5, 5)}), base + unsupported)
    assert one_side.unjudged == (
        ("sim/native/grammar", "unsupported in the candidate only; the two sides ran different setups"),
    )


# --- reports -------------------------------------------------------------------------------------


def test_junit_xml_is_well_formed_with_one_testcase_per_cell(sims: Sims) -> None:
    result = compare(load(sims.baseline), load(sims.degraded), GateConfig(level="scenario", alpha=0.5))
    root = ET.fromstring(render_junit(result))
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [v.name for v in result.cells]
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == str(len(result.failed))
    assert 0 < len(result.failed) < len(result.cells)  # at α = 0.5: some cells of each kind
    for case, v in zip(cases, result.cells, strict=True):
        failures = case.findall("failure")
        assert len(failures) == v.failed
        if v.failed:
            assert failures[0].get("message") == "; ".join(v.reasons) and failures[0].get("type") == "regression"
    assert suite.get("name") == "evalkit gate (SIMULATED)"


def test_junit_escapes_names_and_marks_skipped_cells() -> None:
    base = cells({'a<&>"b': (25, 25)})
    unsupported = [records.run(index=i, outcome="unsupported", completed=False, strategy="grammar") for i in range(3)]
    xml = render_junit(gate(base + unsupported, cells({'a<&>"b': (10, 25)}) + unsupported))
    assert xml.startswith("<?xml")
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "1")
    names = [c.get("name") for c in suite.findall("testcase")]
    assert names == ['sim/native/a<&>"b', "sim/native/grammar"]
    assert suite.findall("testcase")[1].find("skipped") is not None


def test_markdown_summary_lists_failed_cells_first(sims: Sims) -> None:
    result = compare(load(sims.baseline), load(sims.degraded), GateConfig(level="scenario", alpha=0.5))
    text = render_markdown(result)
    lines = [line for line in text.splitlines() if line.startswith("| sim/")]
    assert len(lines) == len(result.cells)
    flags = ["**FAIL**" in line for line in lines]
    assert flags == sorted(flags, reverse=True) and any(flags) and not all(flags)
    assert text.startswith("## evalkit gate: FAIL —") and "> **SIMULATED results" in text
    assert "- model changed: small-local → small-local-degraded (sim)" in text
    failed = [line for line in lines if "**FAIL**" in line]
    assert all(line.count("|") - line.count("\\|") == 13 for line in failed)  # 12 columns: no reason breaks one
    # the passed cells are folded, after the regressed ones
    head, folded = text.split("<details>")
    assert all(line in head for line in failed) and f"{len(lines) - len(failed)} passed cells" in folded


@pytest.mark.parametrize(("seed", "test", "name"), [(None, "mcnemar", "McNemar on pairs"), (7, "boschloo", "Boschloo")])
def test_the_power_note_uses_the_test_the_gate_ran(seed: int | None, test: str, name: str) -> None:
    base = cells({"a": (25, 25), "b": (25, 25)})
    result = gate(base, cells({"a": (25, 25), "b": (25, 25)}, seed=seed))
    kind = REGISTRY[test]  # type: ignore[index]
    rate = detectable_drop(kind, 25, 25, 1.0, 0.025)
    assert rate is not None
    assert kind.power(25, 25, 1.0, rate, 0.0, 0.025) >= 0.8 > kind.power(25, 25, 1.0, rate + 0.01, 0.0, 0.025)
    sides = "25 pairs" if kind.paired else "25 runs per side"
    assert (
        f"power: 2 cell(s) with {sides} ({name}, α/m = 0.025, the first Holm step): a drop "
        f"from 100% to {rate:.0%} or lower is caught with 80% probability (exact)"
    ) in result.notes


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    scenarios=st.integers(1, 4),
    n=st.integers(2, 8),
    level=st.sampled_from(["scenario", "family", "cell"]),
)
def test_infra_errors_anywhere_never_fail_an_unchanged_paired_candidate(
    data: st.DataObject, scenarios: int, n: int, level: str
) -> None:
    """The class of inputs behind an infra-error bug: identical outcomes, infra errors sprinkled on
    either side. Pairs counted on both sides are compared, so every compared cell has p = 1."""
    outcomes = data.draw(st.lists(st.booleans(), min_size=scenarios * n, max_size=scenarios * n))
    sides = []
    for _ in range(2):
        broken = data.draw(st.sets(st.integers(0, scenarios * n - 1)))
        sides.append(
            [
                records.run(
                    scenario=f"s{k // n}",
                    family=f"f{k // n % 2}",
                    index=k % n,
                    completed=outcomes[k] and k not in broken,
                    outcome="infra_error" if k in broken else None,
                )
                for k in range(scenarios * n)
            ]
        )
    result = compare(
        records.results(sides[0]), records.results(sides[1]), GateConfig(level=level, max_infra_error_rate=1.0)
    )
    assert all("no counted runs on both sides" in why for _, why in result.unjudged)
    assert not result.failed and all(v.p == 1.0 and v.baseline == v.candidate for v in result.cells)
