"""The README's findings are generated from the committed results, and its prose types no result.

`scripts/readme_findings.py` writes the blocks between `<!-- generated:NAME -->` markers
(tests/test_regenerate.py holds them, with every other committed artefact); here a stale block is
detected, and the prose of the two findings sections is
searched for typed rates, counts and retry figures (only the published ADR-013 table may have them).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = (
    "## Reproducing ADR-013",
    "## Forge's own guards under test",
    "## Compare models before deployment",
    "### SmolLM2 on every category",
)
# a rate ("40%", "40–60%"), a count ("1/5") or a mean retries figure ("r3.0")
TYPED_RESULT = re.compile(r"\d+\s*%|\b\d+/\d+\b|\br\d\.\d\b")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_findings", ROOT / "scripts" / "readme_findings.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else None]


def test_the_findings_prose_types_no_result() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for heading in SECTIONS:
        prose = _section(text, heading)
        prose = re.sub(r"<!-- (generated|published):([\w-]+) -->.*?<!-- /\1:\2 -->", "", prose, flags=re.S)
        typed = [line for line in prose.splitlines() if TYPED_RESULT.search(line.replace("Wilson 95%", ""))]
        assert typed == [], f"{heading}: results typed outside a generated block: {typed}"


def test_a_stale_block_is_detected_and_rewritten() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))  # it regenerates every block
    script = _script()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    end = "<!-- /generated:compare-models-matrix -->"
    tampered = text.replace(end, "| smollm2 (prompt) | trust_text | 5/5 = 100% |\n" + end)
    assert tampered != text
    fixed, stale = script.regenerate(tampered)
    assert stale == ["compare-models-matrix"] and fixed == text


def test_every_block_must_be_present() -> None:
    with pytest.raises(SystemExit, match="no generated block for adr013-findings"):
        _script().regenerate("<!-- generated:adr013-matrix -->\n<!-- /generated:adr013-matrix -->\n")
