"""User-defined families: a scenario may name its own family; a config that runs it declares it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main

SCENARIO = """id: book-room
family: scheduling
turns: ["Book room A for 10am."]
tools:
  - name: book
    parameters: {type: object, properties: {room: {type: string}}, required: [room]}
    results: [{when: {room: A}, returns: {ok: true}}]
reference: {calls: [{name: book, arguments: {room: A}}], reply: Booked.}
check: {calls: {required: [{name: book, arguments: {room: A}}]}}
"""


def _config(tmp_path: Path, **extra: object) -> Path:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    config = tmp_path / "c.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "c",
                "runs": 2,
                "scenarios": [str(tmp_path / "s.yaml")],
                "backends": [{"label": "sim", "kind": "sim", "model": "strong"}],
                "strategies": {"trust_text": ["trust_text"]},
                **extra,
            }
        )
    )
    return config


def test_declared_custom_family_runs(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    config = _config(tmp_path, custom_families=["scheduling"], families=["scheduling"])
    assert main(["run", str(config), "-o", str(out)]) == 0
    runs = [r for r in map(json.loads, out.read_text().splitlines()) if r.get("type") == "run"]
    assert len(runs) == 2 and {r["cell"]["family"] for r in runs} == {"scheduling"}


def test_undeclared_family_is_an_error_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(_config(tmp_path)), "-o", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "s.yaml" in err and "family" in err and "custom_families" in err


def test_family_names_are_identifiers(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO.replace("family: scheduling", "family: Sched ule"))
    assert main(["validate", str(tmp_path / "s.yaml")]) == 1
