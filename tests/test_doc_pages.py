"""The pages the README test runs, and the regenerator searches, are every page of the site, the
README first (scripts/doc_pages.py reads mkdocs.yml's nav; issue 39, item 7). Needs no mkdocs."""

from __future__ import annotations

from pathlib import Path

from tests.integration.readme_blocks import DOC_PAGES, ROOT, doc_blocks


def test_every_page_under_docs_is_read_once_after_the_readme() -> None:
    pages = DOC_PAGES.doc_pages(ROOT)
    assert pages[0] == ROOT / "README.md"
    assert len(pages) == len(set(pages))
    assert set(pages[1:]) == set((ROOT / "docs").rglob("*.md")), "a page missing from mkdocs.yml's nav"


def test_the_order_is_the_nav_order(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    nav = "nav:\n  - Home: index.md\n  - B: b.md\n  - Part:\n      - A: a.md\n      - B again: b.md\n"
    (tmp_path / "mkdocs.yml").write_text(f"site_name: x\ndocs_dir: docs\n{nav}", encoding="utf-8")
    names = [DOC_PAGES.name_of(p, tmp_path) for p in DOC_PAGES.doc_pages(tmp_path)]
    assert names == ["README.md", "docs/b.md", "docs/a.md"]


def test_blocks_are_named_after_their_page_and_keep_the_readme_first() -> None:
    blocks = doc_blocks()
    assert blocks[0].page == "README.md" and blocks[0].kind == "install"
    assert len({b.name for b in blocks}) == len(blocks)
    pages = [b.page for b in blocks]
    order = [DOC_PAGES.name_of(p, ROOT) for p in DOC_PAGES.doc_pages(ROOT)]
    assert pages == sorted(pages, key=order.index), "blocks run page by page in the nav's order"
    # the Forge page's findings block rewrites every generated table, the BFCL ones too: it needs the
    # bfcl-eval that the Importing BFCL page's block installs, so that page comes first
    install = next(b for b in blocks if "pip install --no-deps 'bfcl-eval" in b.script)
    rewrite = next(b for b in blocks if "python scripts/readme_findings.py" in b.script)
    assert blocks.index(install) < blocks.index(rewrite)
