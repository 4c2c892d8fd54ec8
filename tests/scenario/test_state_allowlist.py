"""Stateful mock classes come from an allowlist: BFCL's backends by exact path, and modules the user
names (`--allow-state-module`, `allow_state_modules` in the run config). A scenario file alone never
makes `validate`, `run` or `rescore` import a module: a planted module that writes a marker file when
imported is referenced from a scenario, and the marker must not appear until the user opts in.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main
from evalkit.errors import ScenarioError
from evalkit.scenario.model import Scenario, StatefulClass, load_scenario
from evalkit.scenario.state_allowlist import BFCL_STATE_CLASSES
from evalkit.scenario.statemocks import StatefulMocks
from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]

STORE = """
with open({marker!r}, "a") as fh:
    fh.write("imported\\n")


class Store:
    def __init__(self):
        self.values = []

    def put(self, value):
        self.values.append(value)
        return "ok"
"""


def scenario_doc(target: str) -> dict[str, object]:
    return {
        "schema_version": 2,
        "id": "planted",
        "family": "action_completion",
        "turns": ["store x"],
        "state": [{"class": target}],
        "tools": [
            {
                "name": "put",
                "description": "Store a value.",
                "parameters": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
            }
        ],
        "reference": {"calls": [{"name": "put", "arguments": {"value": "x"}}], "reply": "Stored."},
        "check": {"state_as_reference": True},
    }


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """(module name, marker path): a module on sys.path that writes the marker when imported."""
    folder, marker = tmp_path / "planted", tmp_path / "marker"
    folder.mkdir()
    module = f"evalkit_planted_{uuid.uuid4().hex[:10]}"
    (folder / f"{module}.py").write_text(STORE.format(marker=str(marker)), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield module, marker
    sys.modules.pop(module, None)


def write_scenario(folder: Path, target: str) -> Path:
    path = folder / "scenarios" / "planted.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(scenario_doc(target), sort_keys=False), encoding="utf-8")
    return path


def write_config(folder: Path, scenario: Path, **extra: object) -> Path:
    doc = {
        "name": "planted",
        "runs": 1,
        "scenarios": [str(scenario)],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": {"trust_text": ["trust_text"]},
        **extra,
    }
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_validate_run_and_rescore_import_nothing_a_scenario_names(
    planted: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, marker = planted
    scenario = write_scenario(tmp_path, f"{module}:Store")
    assert main(["validate", str(scenario)]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"{scenario}:") and "state.0.class: " in line
    assert f"--allow-state-module {module}" in line
    out = tmp_path / "r.jsonl"
    assert main(["run", str(write_config(tmp_path, scenario)), "-o", str(out), "--no-progress"]) == 2
    assert "state.0.class" in one_line(capsys.readouterr().err) and not out.exists()
    committed = ROOT / "results/compare-models.jsonl"
    args = ["rescore", str(committed), "-o", str(tmp_path / "x.jsonl"), "--scenarios", str(scenario)]
    assert main(args) == 2
    assert "state.0.class" in one_line(capsys.readouterr().err)
    assert not marker.exists() and module not in sys.modules


def test_the_flag_or_the_config_opts_in(
    planted: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, marker = planted
    scenario = write_scenario(tmp_path, f"{module}:Store")
    assert main(["validate", str(scenario), "--allow-state-module", module]) == 0, capsys.readouterr().err
    assert marker.read_text() == "imported\n"
    config = write_config(tmp_path, scenario, allow_state_modules=[module])
    assert main(["run", str(config), "-o", str(tmp_path / "r.jsonl"), "--no-progress"]) == 0


def test_a_code_runner_from_the_standard_library_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: validate imported `code` and the reference call `runsource` ran Python from the YAML
    touched = tmp_path / "touched"
    doc = scenario_doc("code:InteractiveInterpreter")
    doc["tools"] = [
        {
            "name": "runsource",
            "description": "Run Python.",
            "parameters": {"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"]},
        }
    ]
    doc["reference"] = {"calls": [{"name": "runsource", "arguments": {"source": f"open({str(touched)!r}, 'w')"}}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    assert "'code:InteractiveInterpreter' is not an allowed state class" in one_line(capsys.readouterr().err)
    assert not touched.exists()


def test_a_function_is_a_load_error_naming_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: `os:system` was called with no arguments: a TypeError traceback
    path = write_scenario(tmp_path, "os:system")
    assert main(["validate", str(path)]) == 1
    assert one_line(capsys.readouterr().err).startswith(f"{path}:7: state.0.class: 'os:system' is not an allowed")
    assert main(["validate", str(path), "--allow-state-module", "os"]) == 1  # allowed, but not a class
    assert one_line(capsys.readouterr().err) == f"{path}: state.0.class: 'os:system' is a function, not a class"


def test_a_spec_that_skipped_the_allowlist_is_never_imported(planted: tuple[str, Path]) -> None:
    module, marker = planted
    spec = StatefulClass.model_construct(**{"class": f"{module}:Store", "config": {}})
    scenario = Scenario.model_validate(scenario_doc(next(iter(BFCL_STATE_CLASSES)))).model_copy(
        update={"state": [spec]}
    )
    with pytest.raises(ScenarioError, match="not checked against the state-class allowlist"):
        StatefulMocks(scenario)
    assert not marker.exists()


def test_bfcl_classes_are_allowed_by_exact_path_only(tmp_path: Path) -> None:
    gorilla = next(c for c in BFCL_STATE_CLASSES if c.endswith(":GorillaFileSystem"))
    assert load_scenario(write_scenario(tmp_path, gorilla)).state[0].allowed
    module = gorilla.partition(":")[0]
    with pytest.raises(ScenarioError, match="not an allowed state class"):
        load_scenario(write_scenario(tmp_path, f"{module}:os"))


def test_the_bfcl_allowlist_is_bfcls_own_mapping() -> None:
    constants = pytest.importorskip("bfcl_eval.constants.executable_backend_config", reason=needs_extra("bfcl"))

    mapping = constants.CLASS_FILE_PATH_MAPPING
    assert {f"{module}:{cls}" for cls, module in mapping.items()} == BFCL_STATE_CLASSES


def test_an_allowed_function_fails_before_the_results_file_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: the run started, then stopped with a header and a footer and no runs
    scenario = write_scenario(tmp_path, "os:system")
    config = write_config(tmp_path, scenario, allow_state_modules=["os"])
    assert main(["validate", str(config)]) == 1
    assert one_line(capsys.readouterr().err).endswith("state.0.class: 'os:system' is a function, not a class")
    out = tmp_path / "r.jsonl"
    assert main(["run", str(config), "-o", str(out), "--no-progress"]) == 2
    assert "'os:system' is a function, not a class" in one_line(capsys.readouterr().err) and not out.exists()
