"""Messages a newcomer meets in the second hour (issue 31): `validate` checks each kind of YAML file as
that kind, an "unknown X" lists what `evalkit list` lists, and counts take their plural."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
SMALL_LOCAL = ROOT / "evalkit" / "profiles" / "small-local.yaml"


def _listed(capsys: pytest.CaptureFixture[str], what: str) -> list[str]:
    assert main(["list", what]) == 0
    return [
        line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if line.startswith("  ") and line[2] != " "
    ]


def test_unknown_profile_lists_what_list_profiles_lists(capsys: pytest.CaptureFixture[str]) -> None:
    profiles = _listed(capsys, "profiles")
    assert "fitted/smollm2" in profiles
    assert main(["sim", "check", "fitted/nope", str(ROOT / "results" / "compare-models.jsonl")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "'fitted/nope'" in err and all(name in err for name in profiles), err


def test_unknown_strategy_lists_what_list_strategies_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strategies = _listed(capsys, "strategies")
    config = tmp_path / "c.yaml"
    text = (ROOT / "configs" / "default.yaml").read_text(encoding="utf-8")
    text = text.replace("../scenarios", str(ROOT / "scenarios")).replace("[trust_text]", "[trust_txt]", 1)
    config.write_text(text, encoding="utf-8")
    assert main(["validate", str(config)]) == 1
    err = capsys.readouterr().err
    assert "trust_txt" in err and all(name in err for name in strategies), err


def test_validate_configs_checks_each_file_as_its_kind(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """configs/ holds run configs and a published table: each passes as what it is. Left out: the
    configs whose check needs more than a dev install (a `serve:` entry needs llama-server's packaged
    models or a Forge venv beside the repository; forge-inproc.yaml needs Python 3.12 with Forge)."""
    folder = tmp_path / "configs"
    folder.mkdir()
    for source in sorted((ROOT / "configs").glob("*.yaml")):
        text = source.read_text(encoding="utf-8")
        if "serve:" in text or source.name == "forge-inproc.yaml":
            continue
        # the copies name the repository's scenarios
        (folder / source.name).write_text(text.replace("../scenarios", str(ROOT / "scenarios")), encoding="utf-8")
    assert len(list(folder.iterdir())) >= 3
    assert main(["validate", str(folder)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "published table" in out and "run config" in out


@pytest.mark.parametrize(
    ("kind", "text", "named"),
    [
        ("published", "source: x\nmetric: completed\nfamilies: [a]\nrows:\n  - {label: r, rates: {a: 2.0}}\n", "rates"),
        ("gate", "alpha: 0.05\nmargin: 1.5\n", "margin"),
        (
            "profile",
            (ROOT / "evalkit" / "profiles" / "small-local.yaml").read_text(encoding="utf-8") + "bogus: 1\n",
            "bogus",
        ),
    ],
)
def test_a_broken_file_is_named_with_its_field(
    kind: str, text: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(str(path)) and named in err, err
    assert "Field required" not in err and "id:" not in err, err  # not checked as a scenario


def test_validate_checks_a_shipped_fitted_profile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "evalkit" / "profiles")]) == 0, capsys.readouterr().err
    assert "simulated profile" in capsys.readouterr().out


def test_counts_take_their_plural() -> None:
    from evalkit.results.escaping import plural

    assert [plural(1, "infra error"), plural(2, "infra error"), plural(0, "file")] == [
        "1 infra error",
        "2 infra errors",
        "0 files",
    ]


def test_validate_of_one_file_says_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(ROOT / "configs" / "adr013-published.yaml")]) == 0
    assert capsys.readouterr().out.strip() == "1 of 1 file valid (1 published table)"


def test_validate_knows_every_gate_config_key() -> None:
    from evalkit.cli.validate_cmd import GATE_KEYS
    from evalkit.gate.config import GateConfig

    assert set(GATE_KEYS) == set(GateConfig.model_fields)
