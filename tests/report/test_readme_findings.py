"""The documentation's findings are generated from the committed results, and its prose types no result.

`scripts/readme_findings.py` writes the blocks between `<!-- generated:NAME -->` markers
(tests/test_regenerate.py holds them, with every other committed artefact); here a stale block is
detected, every block is on one page (README.md or docs/*.md), and the prose of the findings pages
is searched for typed rates, counts and retry figures (only the published ADR-013 table may have them).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = (  # (page, the heading its findings start at)
    ("docs/adr013.md", "# Reproducing ADR-013"),
    ("docs/forge.md", "# Forge's own guards under test"),
    ("docs/compare-models.md", "# Compare models before deployment"),
    ("docs/importing-bfcl.md", "## SmolLM2 on every category"),
    ("docs/agents-under-test.md", "# Agents under test"),
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
    """From `heading` to the page's next heading of its level or above."""
    start = text.index(heading + "\n")
    level = heading.split(" ", 1)[0]
    ends = [e for e in (text.find(f"\n{'#' * n} ", start + len(heading)) for n in range(1, len(level) + 1)) if e >= 0]
    return text[start : min(ends) if ends else None]


def _pages() -> dict[str, str]:
    script = _script()
    return {script.name_of(p): p.read_text(encoding="utf-8") for p in script.doc_pages()}


def test_the_findings_prose_types_no_result() -> None:
    for page, heading in SECTIONS:
        prose = _section((ROOT / page).read_text(encoding="utf-8"), heading)
        prose = re.sub(r"<!-- (generated|published):([\w-]+) -->.*?<!-- /\1:\2 -->", "", prose, flags=re.S)
        typed = [line for line in prose.splitlines() if TYPED_RESULT.search(line.replace("Wilson 95%", ""))]
        assert typed == [], f"{heading}: results typed outside a generated block: {typed}"


def test_a_stale_block_is_detected_and_rewritten() -> None:
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))  # it regenerates every block
    script = _script()
    pages = _pages()
    end = "<!-- /generated:compare-models-matrix -->"
    tampered = {
        name: text.replace(end, "| smollm2 (prompt) | trust_text | 5/5 = 100% |\n" + end)
        for name, text in pages.items()
    }
    assert tampered["docs/compare-models.md"] != pages["docs/compare-models.md"]
    fixed, stale = script.regenerate_pages(tampered)
    assert stale == ["compare-models-matrix"] and fixed == pages


def test_every_block_is_on_exactly_one_page() -> None:
    """The blocks moved with the pages that show them (issue 39); the regenerator finds each there."""
    pages = _pages()
    for name in _script().BLOCKS:
        holding = [page for page, text in pages.items() if f"<!-- generated:{name} -->" in text]
        assert len(holding) == 1, f"generated:{name} is on {holding or 'no page'}"
    figures = [page for page, text in pages.items() if "<!-- sim-figures -->" in text]
    assert figures == ["docs/sim-fitting.md"]


def test_every_block_must_be_present() -> None:
    with pytest.raises(SystemExit, match="no generated block for adr013-findings"):
        _script().regenerate("<!-- generated:adr013-matrix -->\n<!-- /generated:adr013-matrix -->\n")
