"""What `evalkit import bfcl` says of a converted case evalkit would refuse is one line in the words of
the scenario format (a field path and what is wrong there), never pydantic's own text ("1 validation
error for Scenario", "Value error, ...": issue 31)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.importers.bfcl import _refusal

ROOT = Path(__file__).resolve().parents[2]
CASE: dict[str, Any] = yaml.safe_load(
    next((ROOT / "scenarios" / "bfcl" / "simple_python").glob("*.yaml")).read_text(encoding="utf-8")
)


def _tool(s: dict[str, Any]) -> str:
    return str(s["tools"][0]["name"])


BREAKS: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "id": (lambda s: s.update(id="bad id!"), "id: "),
    "schema": (
        lambda s: s["tools"][0].update(parameters={"type": "object", "properties": {"a": {"type": "no"}}}),
        "tools.0.parameters.properties.a.type: ",
    ),
    "no turns": (lambda s: s.update(turns=[]), "turns: "),
    "unknown tool": (
        lambda s: s.update(turns=[{"user": "x", "reference": [{"name": "nope", "arguments": {}}]}]),
        "turns.0.reference.0.name: unknown tool",
    ),
    "arguments": (
        lambda s: s.update(turns=[{"user": "x", "reference": [{"name": _tool(s), "arguments": "x"}]}]),
        "turns.0.reference.0.arguments: ",
    ),
    "extra field": (lambda s: s["check"].update(bogus=1), "check.bogus: "),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_refused_case_is_said_in_the_formats_words(name: str) -> None:
    mutate, start = BREAKS[name]
    scenario = copy.deepcopy(CASE)
    mutate(scenario)
    reason = _refusal(scenario)
    assert reason.startswith(start), reason
    assert "\n" not in reason and "validation error" not in reason and "Value error" not in reason, reason
