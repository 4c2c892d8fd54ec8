"""The shell blocks of the README and the pages under docs/, as a reader meets them (the README,
then the pages in mkdocs.yml's nav order: scripts/doc_pages.py), and how the README test runs each one.

A block may be preceded by a comment that says what it needs (docs/testing.md lists them):

    <!-- readme-test: server -->            a real llama-server and the packaged models (`server` mark)
    <!-- readme-test: slow: REASON -->      minutes to hours; only `pytest -m slow` runs it
    <!-- readme-test: needs MODULE -->      runs when MODULE is importable
    <!-- readme-test: install -->           a fresh venv and `pip install -e .` before the command:
                                            the default test runs the command in this environment,
                                            `-m slow` the whole line in a fresh copy
    <!-- readme-test: skip: REASON -->      never run by the test (said why)
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _doc_pages() -> ModuleType:
    spec = importlib.util.spec_from_file_location("doc_pages", ROOT / "scripts" / "doc_pages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOC_PAGES = _doc_pages()

# What block 1 of "Two commands" puts before its command: the default test's environment is already
# that installed venv, so it runs the command alone (the slow item runs the whole line).
INSTALL_PREFIX = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && "

# A block that installs an extra of this checkout (`pip install -e '.[pytest]'`): in the test's own
# environment the install is left out (it would point the environment's evalkit at the test's copy)
# and the block runs when the extra's packages are there; the fresh environment runs it as written.
_EXTRA_INSTALL = re.compile(r"pip install -e '\.\[(?P<extras>[a-z0-9,-]+)\]'(?: && |\s*(?:#[^\n]*)?(?:\n|$))")

_FENCE = re.compile(r"^```(?P<lang>\S*)\n(?P<body>.*?)^```$", re.S | re.M)
_ANNOTATION = re.compile(r"<!-- readme-test: (?P<kind>server|slow|needs|install|skip)(?::? ?(?P<arg>.*?))? -->\s*$")
_HEADING = re.compile(r"^#+ (.*)$", re.M)


@dataclass(frozen=True)
class Block:
    """One ```sh block: its text, where it is (its page and line), and what its annotation asks for."""

    name: str
    line: int
    script: str
    kind: str = ""
    arg: str = ""
    page: str = "README.md"


def doc_blocks() -> list[Block]:
    """Every ```sh block of every page, in reading order; a page's blocks are named `page/section-N`
    (the README's `section-N`)."""
    blocks: list[Block] = []
    for path in DOC_PAGES.doc_pages(ROOT):
        page = DOC_PAGES.name_of(path, ROOT)
        prefix = "" if page == "README.md" else f"{path.stem}/"
        for block in readme_blocks(path.read_text(encoding="utf-8")):
            blocks.append(Block(f"{prefix}{block.name}", block.line, block.script, block.kind, block.arg, page))
    return blocks


def readme_blocks(text: str) -> list[Block]:
    """Every ```sh block of one page in order, named after its section and position in it."""
    blocks: list[Block] = []
    counts: dict[str, int] = {}
    for match in _FENCE.finditer(text):
        if match.group("lang") != "sh":
            continue
        before = text[: match.start()]
        headings = _HEADING.findall(_FENCE.sub("", before))  # a `# comment` in a block is no heading
        section = _slug(headings[-1] if headings else "top")
        counts[section] = counts.get(section, 0) + 1
        previous = before.rstrip("\n").rsplit("\n", 1)[-1]
        note = _ANNOTATION.search(previous)
        blocks.append(
            Block(
                name=f"{section}-{counts[section]}",
                line=before.count("\n") + 1,
                script=match.group("body"),
                kind=note.group("kind") if note else "",
                arg=(note.group("arg") or "").strip() if note else "",
            )
        )
    return blocks


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def copy_repo(dest: Path) -> Path:
    """The repository's tracked files (what a fresh clone holds) under `dest`."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, text=True
        ).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):
        listed = []
    files = [f for f in listed if f and (ROOT / f).is_file()]
    if not files:  # no git: everything but what a checkout builds
        ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")
        shutil.copytree(ROOT, dest, ignore=ignore, dirs_exist_ok=True)
        return dest
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


def evalkit_shim(folder: Path) -> Path:
    """An `evalkit` command that runs the evalkit under test (this checkout) with this interpreter,
    whatever PYTHONPATH a block sets; placed first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = folder / "evalkit"
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from evalkit.cli import main; sys.exit(main())"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{code}" "$@"\n')
    shim.chmod(0o755)
    return folder


def without_extra_installs(script: str) -> tuple[str, list[str]]:
    """`script` without its installs of this checkout's extras, and the extras they named."""
    extras = [e for m in _EXTRA_INSTALL.finditer(script) for e in m.group("extras").split(",")]
    return _EXTRA_INSTALL.sub("", script), extras
