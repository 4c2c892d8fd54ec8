"""Every gate setting does the same from the command line as from `--config`: for each key of the
gate config, results on which that key changes the verdict, gated once with the key in a config
file and once with its option; the exit code and the output agree, and differ from the default's.
A `--stratified` that was parsed and then dropped exited 0 where `stratified: true` exited 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import main
from evalkit.cli.gate_run import CONFIG_ONLY
from evalkit.gate.config import GateConfig
from evalkit.results.records import RunRecord
from tests.report import records

Case = tuple[list[RunRecord], list[RunRecord], dict[str, Any], dict[str, Any]]
Sides = tuple[list[RunRecord], list[RunRecord]]


def broad(drop: bool = True) -> Sides:
    base = [r for i in range(48) for r in records.cell_runs(24, 25, scenario=f"s{i}")]
    cand = [r for i in range(48) for r in records.cell_runs(22 if drop else 24, 25, scenario=f"s{i}", seed=7)]
    return base, cand


def one(
    xb: int, xc: int, n: int = 25, *, seed: int | None = 7, **fields: Any
) -> tuple[list[RunRecord], list[RunRecord]]:
    return records.cell_runs(xb, n, **fields), records.cell_runs(xc, n, seed=seed, **fields)


def _incorrect(runs: list[RunRecord], k: int) -> list[RunRecord]:
    """The first k completed runs answer wrongly: completed, not correct."""
    return [r.model_copy(update={"correct": False}) if i < k else r for i, r in enumerate(runs)]


def _infra(runs: list[RunRecord], k: int) -> list[RunRecord]:
    return [
        r.model_copy(update={"outcome": "infra_error", "completed": False, "correct": False, "failure": None})
        if i >= len(runs) - k
        else r
        for i, r in enumerate(runs)
    ]


def _cases() -> dict[str, Callable[[], Case]]:
    """Per key: (baseline runs, candidate runs, the key's settings, settings shared by both runs)."""
    return {
        "alpha": lambda: (*one(25, 21), {"alpha": 0.01}, {}),  # Boschloo p = 0.025
        "metric": lambda: (
            records.cell_runs(25, 25),
            _incorrect(records.cell_runs(25, 25, seed=7), 10),
            {"metric": "completed"},
            {},
        ),
        "floor": lambda: (*one(20, 20), {"floor": 0.99}, {}),
        "max_infra_error_rate": lambda: (
            records.cell_runs(25, 25, strategy="a") + records.cell_runs(25, 25, strategy="b"),
            _infra(records.cell_runs(25, 25, strategy="a", seed=7), 4)
            + records.cell_runs(25, 25, strategy="b", seed=7),
            {"max_infra_error_rate": 0.5},
            {},
        ),
        "test": lambda: (*one(25, 21), {"test": "fisher"}, {}),  # Boschloo 0.025, Fisher 0.055
        "pairing": lambda: (*one(25, 21), {"pairing": "paired"}, {}),  # other seeds: they cannot pair
        "level": lambda: (*broad(), {"level": "cell"}, {}),
        "match_model": lambda: (
            records.cell_runs(25, 25),
            records.cell_runs(25, 25, seed=7, model="m2"),
            {"match_model": True},
            {},
        ),
        "allow_unjudged": lambda: (
            records.cell_runs(25, 25, strategy="a") + records.cell_runs(25, 25, strategy="b"),
            records.cell_runs(25, 25, strategy="a", seed=7),
            {"allow_unjudged": True},
            {},
        ),
        "margin": lambda: (*one(25, 20), {"margin": 0.3}, {}),
        "stratified": lambda: (*broad(), {"stratified": True}, {}),
        "require_evidence": lambda: (*one(25, 25), {"require_evidence": True}, {"margin": 0.05}),
    }


def test_every_setting_has_an_option_or_is_config_only_with_a_reason() -> None:
    assert set(_cases()) | set(CONFIG_ONLY) == set(GateConfig.model_fields)
    assert set(CONFIG_ONLY) == {"floors", "sequential"}  # a list of rules; the sequential mode's own options


def _option(key: str, value: Any) -> list[str]:
    flag = "--" + key.replace("_", "-")
    return [flag] if value is True else [flag, str(value)]


def _gate(tmp: Path, base: Path, cand: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["gate", "--baseline", str(base), "--candidate", str(cand), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("key", sorted(_cases()))
def test_each_option_does_what_its_config_key_does(
    key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_runs, cand_runs, setting, shared = _cases()[key]()
    base = records.write_results(tmp_path / "b.jsonl", base_runs)
    cand = records.write_results(tmp_path / "c.jsonl", cand_runs)
    shared_args = [a for k, v in shared.items() for a in _option(k, v)]
    config = tmp_path / "gate.yaml"
    config.write_text(yaml.safe_dump(setting | shared), encoding="utf-8")
    by_key = _gate(tmp_path, base, cand, ["--config", str(config)], capsys)
    by_option = _gate(
        tmp_path, base, cand, [a for k, v in setting.items() for a in _option(k, v)] + shared_args, capsys
    )
    default = _gate(tmp_path, base, cand, shared_args, capsys)
    assert by_key == by_option
    assert by_key != default, f"{key}: these results do not show what the setting changes"
