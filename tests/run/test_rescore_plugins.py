"""A results file is data: `rescore` imports a plugin guard its header names only when the user
names it again (`--allow-plugin`, or `--config` with the run's config), and otherwise says which
plugin it would need. The plugin here writes a marker file when imported."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]

GUARD = """
with open({marker!r}, "a") as fh:
    fh.write("imported\\n")

from dataclasses import dataclass
from typing import ClassVar

from evalkit.strategies.trust_text import TrustText


@dataclass
class Plain(TrustText):
    name: ClassVar[str] = "plain"
"""


@pytest.fixture
def guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    folder, marker = tmp_path / "plugins", tmp_path / "marker"
    folder.mkdir()
    module = f"evalkit_guard_{uuid.uuid4().hex[:10]}"
    (folder / f"{module}.py").write_text(GUARD.format(marker=str(marker)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield module, marker
    sys.modules.pop(module, None)


def results_naming(plugin: str, tmp_path: Path) -> Path:
    """compare-models.jsonl whose header says its `trust_text` stack was the plugin `plugin`."""
    lines = (ROOT / "results/compare-models.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["config"]["strategies"]["trust_text"] = [{"plugin": plugin}]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def rescore(source: Path, tmp_path: Path, *extra: str) -> int:
    out = tmp_path / "out.jsonl"
    return main(["rescore", str(source), "-o", str(out), "--scenarios", str(ROOT / "scenarios"), *extra])


def test_rescore_names_the_plugin_it_would_need_and_imports_nothing(
    guard: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: rescore imported whatever module the header named
    module, marker = guard
    source = results_naming(f"{module}:Plain", tmp_path)
    assert rescore(source, tmp_path) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"plugin guard '{module}:Plain'" in err and f"--allow-plugin {module}:Plain" in err
    assert not marker.exists() and module not in sys.modules and not (tmp_path / "out.jsonl").exists()


def test_the_flag_or_the_runs_config_opts_in(
    guard: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, marker = guard
    source = results_naming(f"{module}:Plain", tmp_path)
    assert rescore(source, tmp_path, "--allow-plugin", module) == 0, capsys.readouterr().err
    assert marker.read_text() == "imported\n"
    config = tmp_path / "run.yaml"
    doc = {
        "name": "compare-models",
        "scenarios": [str(ROOT / "scenarios/casual_greeting/hi.yaml")],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": {"trust_text": [{"plugin": f"{module}:Plain"}]},
    }
    config.write_text(yaml.safe_dump(doc), encoding="utf-8")
    # out.jsonl now holds the first rescore's results: replacing them takes --overwrite
    assert rescore(source, tmp_path, "--config", str(config), "--overwrite") == 0, capsys.readouterr().err


def test_a_plugin_under_another_module_is_not_opted_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = results_naming("os:system", tmp_path)
    assert rescore(source, tmp_path, "--allow-plugin", "o") == 2
    assert "--allow-plugin os:system" in capsys.readouterr().err
