"""The documentation's pages in reading order: README.md, then the pages under docs/ in the order of
mkdocs.yml's `nav` (whose `index.md` is the README itself: scripts/mkdocs_hooks.py).

The README test runs the pages' `sh` blocks in this order, and scripts/readme_findings.py,
scripts/sim_figures.py and scripts/regenerate.py find the generated blocks in these pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _nav_files(entry: Any) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [f for item in entry for f in _nav_files(item)]
    if isinstance(entry, dict):
        return [f for value in entry.values() for f in _nav_files(value)]
    return []


def doc_pages(root: Path = ROOT) -> list[Path]:
    """README.md, then every page of the nav, each once, in order."""
    config = yaml.safe_load((root / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = [root / "README.md"]
    for name in _nav_files(config["nav"]):
        path = root / "README.md" if name == "index.md" else root / config.get("docs_dir", "docs") / name
        if path not in pages:
            pages.append(path)
    return pages


def name_of(page: Path, root: Path = ROOT) -> str:
    """A page as its path in the repository (`README.md`, `docs/forge.md`)."""
    return page.relative_to(root).as_posix()
