"""`evalkit import bfcl`: converts from the installed package, keeps provenance, maps BFCL's types as
BFCL does for function-calling models, and says what it did not convert."""

from __future__ import annotations

import re
from pathlib import Path

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
