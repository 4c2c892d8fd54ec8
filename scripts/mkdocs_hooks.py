"""MkDocs hooks (mkdocs.yml `hooks:`): README.md is the site's home page, not a copy kept beside it.

The README links the pages as GitHub shows them, `docs/NAME.md` and `docs/images/...`; on the site
the home page sits in docs/ itself, so those links lose their `docs/` there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parent.parent / "README.md"
_DOCS_LINK = re.compile(r"\]\(docs/")


def home_page(readme: str) -> str:
    """The README as the site's index.md."""
    return _DOCS_LINK.sub("](", readme)


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "index.md", content=home_page(README.read_text(encoding="utf-8"))))
    return files
