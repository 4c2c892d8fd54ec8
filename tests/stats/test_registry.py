"""The statistics users choose for the gate's unpaired cells are written once, in
`evalkit.stats.registry.UNPAIRED`: the command line, a gate config's validation and the docs' table
read them from there, and a statistic registered in another registry (this test's: Fisher's mid-p,
defined here as a new statistic's module would) is offered by all of them."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from evalkit.cli import gate_cmd, plan_cmd
from evalkit.gate.config import GateConfig, load_gate_config
from evalkit.stats.exact import midp, midp_grid, unpaired_pvalues
from evalkit.stats.gate_tests import BOSCHLOO, Counts, GateTest, by_kind, select
from evalkit.stats.regions import Staircase
from evalkit.stats.registry import UNPAIRED, Statistic
from evalkit.stats.unconditional import Region

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class MidpTest(GateTest):
    """Fisher's mid-p test: a statistic evalkit does not offer, registered only in this test."""

    def pvalue(self, counts: Counts, margin: float) -> float:
        return midp(counts.base_x, counts.base_n, counts.cand_x, counts.cand_n)

    def grid(self, n_base: int, n_cand: int) -> np.ndarray:
        return midp_grid(n_base, n_cand)

    def exact_region(self, n_base: int, n_cand: int, margin: float, alpha: float) -> Region:
        limit = (midp_grid(n_base, n_cand) <= alpha).sum(axis=1) - 1
        return Staircase(n_base, n_cand, np.maximum.accumulate(limit))


MIDP = MidpTest("midp", "Fisher mid-p", "Fisher mid-p", False, ("fisher", "fm"))
WITH_MIDP = UNPAIRED.registered(Statistic("midp", f"{__name__}:MIDP", "Fisher mid-p"))


def _sources() -> list[Path]:
    found = [p for folder in ("evalkit", "benchmarks", "scripts", "tests") for p in (ROOT / folder).rglob("*.py")]
    return [*found, ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]


def test_the_choice_is_written_only_in_the_registry() -> None:
    """No list of just the registered names (a choice, a Literal: written 8 times in 7 files before)."""
    names = "|".join(map(re.escape, UNPAIRED.names))
    one = rf"""['"](?:{names})['"]"""
    listed = re.compile(rf"[\[(]\s*{one}(?:\s*,\s*{one})+\s*,?\s*[\])]")
    assert [str(p.relative_to(ROOT)) for p in _sources() if listed.search(p.read_text(encoding="utf-8"))] == []
    registry = (ROOT / "evalkit" / "stats" / "registry.py").read_text(encoding="utf-8")
    assert all(registry.count(f'Statistic("{n}"') == 1 for n in UNPAIRED.names)


def test_the_docs_table_is_the_registrys() -> None:
    row = next(
        line
        for line in (ROOT / "docs" / "gate.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| unpaired | 0 |")
    )
    assert row.split(" | ")[2] == UNPAIRED.docs_cell() == "Boschloo (default) or Fisher"
    assert WITH_MIDP.docs_cell() == "Boschloo (default), Fisher or Fisher mid-p"


def _parser(module: object, statistics: object) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    module.add_arguments(parser, statistics)  # type: ignore[attr-defined]
    return parser


@pytest.mark.parametrize("module", [gate_cmd, plan_cmd])
def test_a_registered_statistic_is_a_command_line_choice(module: object) -> None:
    base = ["--baseline", "b.jsonl", "--candidate", "c.jsonl"] if module is gate_cmd else ["b.jsonl"]
    assert _parser(module, WITH_MIDP).parse_args([*base, "--test", "midp"]).test == "midp"
    with pytest.raises(argparse.ArgumentError, match="invalid choice: 'midp'"):
        _parser(module, UNPAIRED).parse_args([*base, "--test", "midp"])


def test_a_registered_statistic_is_a_valid_config_setting(tmp_path: Path) -> None:
    (tmp_path / "gate.yaml").write_text("test: midp\n", encoding="utf-8")
    assert load_gate_config(tmp_path / "gate.yaml", WITH_MIDP).test == "midp"
    assert GateConfig.model_validate({"test": "midp"}, context={"statistics": WITH_MIDP}).test == "midp"
    with pytest.raises(ValidationError, match="Input should be 'boschloo' or 'fisher'"):
        GateConfig.model_validate({"test": "midp"})
    assert "midp" not in UNPAIRED.names  # a test's registry is a copy


def test_a_registered_statistic_is_the_test_the_gate_runs_and_plans_for() -> None:
    assert select(False, 0.0, "midp", 30, 30, WITH_MIDP) is MIDP
    assert select(False, 0.0, "boschloo", 30, 30, WITH_MIDP) is BOSCHLOO
    assert by_kind("midp", WITH_MIDP) is MIDP
    counts = Counts(28, 30, 20, 30)
    assert MIDP.pvalue(counts, 0.0) == pytest.approx(float(midp_grid(30, 30)[28, 20]))
    # its power is its own region's, which holds α exactly as its p-values do
    assert 0 < MIDP.power(30, 30, 0.9, 0.6, 0.0, 0.05) <= 1
    assert MIDP.power(30, 30, 0.9, 0.6, 0.0, 0.05) >= BOSCHLOO.power(30, 30, 0.9, 0.6, 0.0, 0.05) - 0.05


def test_the_registry_names_each_statistic_as_its_test_does() -> None:
    for name in UNPAIRED.names:
        assert UNPAIRED.test(name).kind == name
        np.testing.assert_array_equal(unpaired_pvalues(12, 15, name), UNPAIRED.test(name).grid(12, 15))
    with pytest.raises(ValueError, match="registered as 'fisher'"):
        Statistic("fisher", "evalkit.stats.gate_tests:BOSCHLOO", "Fisher").load()
