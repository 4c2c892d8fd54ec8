"""`evalkit import bfcl`: converts from the installed package, keeps provenance, maps BFCL's types as
BFCL does for function-calling models, and says what it did not convert."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.extras import needs_extra

pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))

from evalkit.cli import main
from evalkit.importers.bfcl.schema import tool_schema
from evalkit.scenario.model import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "scenarios" / "bfcl"
CATEGORIES = "irrelevance,live_irrelevance,simple_python,multiple,parallel,multi_turn_miss_param"


def test_import_writes_valid_scenarios_and_lists_what_it_approximated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["import", "bfcl", "--categories", CATEGORIES, "--sample", "4", "--seed", "7", "-o", str(tmp_path)]) == 0
    )
    printed = capsys.readouterr().out
    files = sorted(tmp_path.rglob("*.yaml"))
    assert len(files) == 24 and f"wrote 24 scenarios to {tmp_path}" in printed
    assert "approximated multi_turn_miss_param_" not in printed  # state and execution results are both checked
    assert re.search(r"^multi_turn_miss_param +4 +0 +0$", printed, re.M)  # converted, approximated, skipped
    for scenario in load_scenarios(files):
        assert scenario.provenance is not None and scenario.provenance.license == "Apache 2.0"
        assert scenario.id.startswith("bfcl-") and scenario.provenance.id in scenario.description
    assert all("License: Apache 2.0" in f.read_text().splitlines()[0] for f in files)


def test_committed_sample_is_a_fresh_import(tmp_path: Path) -> None:
    """scenarios/bfcl/ is exactly `evalkit import bfcl --sample 10 --seed 1` (nothing edited by hand)."""
    assert (
        main(["import", "bfcl", "--categories", CATEGORIES, "--sample", "10", "--seed", "1", "-o", str(tmp_path)]) == 0
    )
    fresh = {p.relative_to(tmp_path): p.read_text() for p in tmp_path.rglob("*.yaml")}
    committed = {p.relative_to(COMMITTED): p.read_text() for p in COMMITTED.rglob("*.yaml")}
    assert fresh == committed


def test_unknown_category_is_an_input_error(tmp_path: Path) -> None:
    assert main(["import", "bfcl", "--categories", "simple_cobol", "-o", str(tmp_path)]) == 2


def test_types_map_as_bfcl_maps_them_for_function_calling_models() -> None:
    doc = {
        "name": "geo.distance",
        "description": "d",
        "parameters": {
            "type": "dict",
            "required": ["a"],
            "properties": {
                "a": {"type": "float", "description": "x."},
                "b": {"type": "tuple", "items": {"type": "integer"}},
                "c": {"type": "any"},
                "d": {"type": "dict", "properties": {"e": {"type": "float", "description": ""}}},
                "f": {"type": "array", "items": {"type": "dict", "properties": {"g": {"type": "any"}}}},
                "h": {"description": "no type"},
            },
        },
    }
    tool = tool_schema(doc)
    props = tool["parameters"]["properties"]
    assert tool["name"] == "geo_distance" and tool["parameters"]["type"] == "object"
    assert props["a"] == {"type": "number", "format": "float", "description": "x. This is a float type value."}
    assert props["b"] == {"type": "array", "items": {"type": "integer"}}
    assert props["c"]["type"] == "string" and props["h"]["type"] == "string"
    assert props["d"]["properties"]["e"]["type"] == "number"
    assert props["f"]["items"]["properties"]["g"]["type"] == "string"
    assert doc["parameters"]["type"] == "dict"  # the source is not modified


def test_a_case_that_cannot_be_converted_is_listed_with_its_reason() -> None:
    from evalkit.importers.bfcl.convert import convert_case

    case = {
        "id": "simple_python_x",
        "question": [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]],
        "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}],
    }
    conversion = convert_case("simple_python", case, {"id": "simple_python_x", "ground_truth": []})
    assert conversion.scenario is None and "2 user turns" in conversion.skipped


# -- issue 30: a damaged data folder ------------------------------------------------------------------


def _data_folder(tmp_path: Path, category: str, edit: Callable[[list[str]], list[str]]) -> Path:
    """A copy of the installed BFCL data for one category (its questions edited), laid out as bfcl_eval/data is."""
    from evalkit.importers.bfcl.data import data_dir

    source, folder = data_dir(), tmp_path / "data"
    (folder / "possible_answer").mkdir(parents=True)
    name = f"BFCL_v4_{category}.json"
    lines = (source / name).read_text(encoding="utf-8").splitlines()[:3]
    (folder / name).write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    answers = (source / "possible_answer" / name).read_text(encoding="utf-8").splitlines()[:3]
    (folder / "possible_answer" / name).write_text("\n".join(answers) + "\n", encoding="utf-8")
    if category.startswith("multi_turn"):
        shutil.copytree(source / "multi_turn_func_doc", folder / "multi_turn_func_doc")
    return folder


def _import(folder: Path, category: str, out: Path) -> int:
    return main(["import", "bfcl", "--categories", category, "--data", str(folder), "-o", str(out)])


def test_a_data_line_cut_short_is_exit_2_naming_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: a JSONDecodeError traceback, exit 1
    folder = _data_folder(tmp_path, "simple_python", lambda lines: [lines[0], lines[1][:50], lines[2]])
    assert _import(folder, "simple_python", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalkit: error: {folder / 'BFCL_v4_simple_python.json'}:2: not JSON: EOF while parsing")
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda case: case | {"question": None}, "question: Input should be a valid list"),
        (lambda case: case | {"function": [{"name": 3}]}, "function.0.name: Input should be a valid string"),
        (lambda case: case | {"function": [{"name": "f", "parameters": {"properties": {"a": {"type": []}}}}]}, "type"),
        (lambda case: {k: v for k, v in case.items() if k != "id"}, "id: Field required"),
        (lambda case: [case], "not a JSON object"),
    ],
)
def test_a_case_of_the_wrong_shape_is_exit_2_naming_the_field(
    edit: Callable[[Any], Any], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _data_folder(tmp_path, "simple_python", lambda lines: [json.dumps(edit(json.loads(lines[0])))])
    assert _import(folder, "simple_python", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalkit: error: {folder / 'BFCL_v4_simple_python.json'}:1: ") and says in err


def test_a_multi_turn_case_naming_an_unknown_class_is_skipped_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: KeyError: 'NoSuchAPI', exit 1
    def unknown(lines: list[str]) -> list[str]:
        case = json.loads(lines[0])
        case["involved_classes"] = ["NoSuchAPI"]
        return [json.dumps(case), *lines[1:]]

    folder = _data_folder(tmp_path, "multi_turn_base", unknown)
    assert _import(folder, "multi_turn_base", tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "not converted multi_turn_base_0: unknown BFCL backend class 'NoSuchAPI' (known: " in out
    assert re.search(r"^multi_turn_base +2 +0 +1$", out, re.M)
