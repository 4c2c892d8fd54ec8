"""What the fuzz (tests/cli/test_fuzz.py) found, each kept as a small regression test: every one was a
traceback (exit 1) or a file written where none was named, and is now a one-line error with exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _one_line(capsys: pytest.CaptureFixture[str], says: str) -> None:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and says in err, err


def test_a_nul_byte_in_an_argument(capsys: pytest.CaptureFixture[str]) -> None:
    # ValueError: embedded null byte, from os.open
    assert main(["validate", "a\x00.yaml"]) == 2
    _one_line(capsys, "an argument holds a NUL byte")


def test_an_empty_output_folder_writes_nothing_into_the_current_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `import -o ''` (an unset variable) was Path('') = '.': the scenarios went into the current folder
    monkeypatch.chdir(tmp_path)
    assert main(["import", "bfcl", "--categories", "python", "-o", ""]) == 2
    _one_line(capsys, "argument -o/--output: an empty path")
    assert list(tmp_path.iterdir()) == []


def test_a_file_name_too_long_for_the_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # OSError: File name too long, from the shipped-profile lookup of a config's `model:`
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "long",
                "scenarios": [str(ROOT / "scenarios/casual_greeting/hi.yaml")],
                "backends": [{"label": "s", "kind": "sim", "model": "x" * 300}],
                "strategies": {"t": ["trust_text"]},
            }
        ),
        encoding="utf-8",
    )
    assert main(["run", str(config), "-o", str(tmp_path / "r.jsonl")]) == 2
    _one_line(capsys, "unknown simulated profile 'xxxxx")


def test_a_boolean_json_schema_for_a_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # AttributeError: 'bool' object has no attribute 'get' (`true` and `false` are JSON Schemas)
    scenario = yaml.safe_load((ROOT / "scenarios/casual_greeting/hi.yaml").read_text(encoding="utf-8"))
    scenario["tools"][0]["parameters"]["properties"]["path"] = True
    scenario["tools"][0]["results"] = [{"when": {"path": {"deep": 1}}, "returns": "x"}]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    assert main(["validate", str(path)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("truth", "says"),
    [
        ([{}], "ground_truth.0: Dictionary should have at least 1 item"),  # ValueError: not enough values to unpack
        ([["f(a=1)"]], "ground_truth.0: Input should be a valid dictionary"),  # AttributeError: 'list' ... 'items'
    ],
)
def test_a_bfcl_answer_of_the_wrong_shape(
    truth: list[object], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("bfcl_eval")
    from evalkit.importers.bfcl.data import data_dir

    folder, name = tmp_path / "data", "BFCL_v4_simple_python.json"
    (folder / "possible_answer").mkdir(parents=True)
    shutil.copy(data_dir() / name, folder / name)
    (folder / "possible_answer" / name).write_text(json.dumps({"id": "simple_python_0", "ground_truth": truth}) + "\n")
    assert main(["import", "bfcl", "--categories", "python", "--data", str(folder), "-o", str(tmp_path / "o")]) == 2
    _one_line(capsys, says)


def _results(tmp_path: Path, header_config: dict[str, object]) -> Path:
    """A simulated run's results, made to look real, with its header's config replaced."""
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "c",
                "runs": 2,
                "scenarios": [str(ROOT / "scenarios/casual_greeting/hi.yaml")],
                "modes": ["native"],
                "backends": [{"label": "s", "kind": "sim", "model": "small-local"}],
                "strategies": {"nudge": ["retry_nudge"]},
            }
        ),
        encoding="utf-8",
    )
    path = tmp_path / "r.jsonl"
    assert main(["run", str(config), "-o", str(path), "--no-progress"]) == 0
    lines = path.read_text(encoding="utf-8").replace('"simulated":true', '"simulated":false').splitlines()
    lines[0] = json.dumps(json.loads(lines[0]) | {"config": header_config})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"strategies": {"other": ["trust_text"]}}, "its header has no strategy stack 'nudge'"),  # KeyError: 'nudge'
        ({"strategies": {"nudge": [{"plugin": "x", "options": 5}]}}, "config.strategies: strategy stack 'nudge'"),
    ],
)
@pytest.mark.parametrize("command", ["rescore", "sim fit"])
def test_a_header_that_contradicts_its_runs(
    command: str, config: dict[str, object], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _results(tmp_path, config)
    scenario = str(ROOT / "scenarios/casual_greeting/hi.yaml")
    argv = (
        ["rescore", str(results), "-o", str(tmp_path / "x.jsonl"), "--scenarios", scenario]
        if command == "rescore"
        else [
            "sim",
            "fit",
            str(results),
            "--model",
            "small-local",
            "-o",
            str(tmp_path / "p.yaml"),
            "--scenarios",
            scenario,
        ]
    )
    capsys.readouterr()
    assert main(argv) == 2
    _one_line(capsys, says)


def test_a_significance_level_near_zero_plans_without_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    # OverflowError: cannot convert float infinity to integer (ndtri(1 - 1e-320) is ndtri(1.0))
    assert main(["plan", str(ROOT / "results/compare-models.jsonl"), "--alpha", "1e-320"]) == 0
    assert "runs per side" in capsys.readouterr().out


def test_a_fitted_estimate_naming_no_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pydantic ValidationError from the posterior draw: the part lost a parameter to a mangled key
    text = (ROOT / "evalkit/profiles/fitted/smollm2.yaml").read_text(encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text(text.replace("    reply_step.uses_respond:", "    repl{y_step.uses_respond:", 1), encoding="utf-8")
    assert main(["sim", "check", str(path), str(ROOT / "results/compare-models.jsonl")]) == 2
    _one_line(capsys, "fitted.estimates: 'repl{y_step.uses_respond' names no parameter of this profile")
