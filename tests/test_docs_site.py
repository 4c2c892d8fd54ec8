"""The documentation site builds with `mkdocs build --strict` (issue 39, item 7): a broken link or
anchor, a page left out of the nav or a docstring mkdocstrings cannot render fails the build.

mkdocs.yml makes every link, anchor and nav warning strict; the home page is README.md itself
(scripts/mkdocs_hooks.py), whose `docs/...` links are GitHub's paths and the site's siblings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.extras import missing_of_extra, needs_extra

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _mkdocs() -> None:
    if missing_of_extra("docs"):
        pytest.skip(needs_extra("docs"))


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor, not a warning
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Two commands" in home and 'href="getting-started/"' in home  # the README, its links made the site's
    assert (site / "images" / "report-default.png").is_file()
    api = (site / "reference" / "index.html").read_text(encoding="utf-8")
    for name in (
        "evalkit.run_config",
        "evalkit.load_results",
        "evalkit.backends.base.Backend.complete",
        "evalkit.strategies.base.Strategy.judge",
    ):
        assert f'id="{name}"' in api, f"the API reference has no {name}"


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    """The check that holds the pages is one that can fail: the same config over pages with a link to
    an anchor no page has."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](other.md#no-such-section)\n", encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    config = ROOT.joinpath("mkdocs.yml").read_text(encoding="utf-8")
    nav = config.index("\nnav:\n")
    config = config[:nav].replace("hooks:\n  - scripts/mkdocs_hooks.py\n", "") + "\nnav:\n  - index.md\n  - other.md\n"
    (tmp_path / "mkdocs.yml").write_text(config.replace("paths: [.]", f"paths: [{ROOT}]"), encoding="utf-8")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 1
    assert "no-such-section" in done.stdout + done.stderr
