"""Full-line comments per 100 code lines of a package, for comparing evalkit's comments with the style
anchors' (issue 39: inspect_ai, coverage.py and httpx have about 5 to 13.5, read the same way).

    python scripts/comment_density.py [PACKAGE_DIR ...] [--by-folder] [--exclude GLOB ...]

A full-line comment is a line whose only token is a comment (a `# ...` after code does not count: it
says what its line does, rarely why). A code line is any other line with a token on it; docstrings are
code lines, so moving a reason from a module docstring to the line it explains raises the figure.
Lines are read with `tokenize`, so a `#` inside a string is never taken for a comment.
"""

from __future__ import annotations

import argparse
import io
import sys
import tokenize
from collections import defaultdict
from fnmatch import fnmatch
from pathlib import Path

_SKIPPED = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def count(source: str) -> tuple[int, int]:
    """(full-line comments, code lines) of one module's source."""
    kinds: dict[int, set[int]] = defaultdict(set)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in _SKIPPED:
            continue
        # a string spanning several lines (a docstring) puts code on each of them
        for line in range(token.start[0], token.end[0] + 1):
            kinds[line].add(token.type)
    comments = sum(1 for found in kinds.values() if found == {tokenize.COMMENT})
    return comments, len(kinds) - comments


def density(comments: int, code: int) -> float:
    return 100 * comments / code if code else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=["evalkit"], type=Path)
    parser.add_argument("--by-folder", action="store_true", help="a line per folder as well")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="paths left out")
    args = parser.parse_args(argv)
    for package in args.packages:
        if not package.is_dir():
            print(f"comment_density: {package}: not a directory", file=sys.stderr)
            return 2
        folders: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for path in sorted(package.rglob("*.py")):
            if any(fnmatch(str(path), glob) for glob in args.exclude):
                continue
            comments, code = count(path.read_text(encoding="utf-8"))
            for key in ("", str(path.parent)):
                folders[key][0] += comments
                folders[key][1] += code
        total = folders.pop("")
        print(f"{package}: {density(*total):.1f} full-line comments per 100 code lines ({total[0]} / {total[1]})")
        for folder, (comments, code) in sorted(folders.items()) if args.by_folder else ():
            print(f"  {folder}: {density(comments, code):.1f} ({comments} / {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
