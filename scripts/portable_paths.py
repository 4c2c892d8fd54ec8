"""Rewrite this machine's absolute paths in committed artifacts to the portable form.

Results headers and recordings written before `evalkit.results.portable` stored the llama-server command
line, model and template with absolute paths. This rewrites each such path as evalkit now stores
it (`site-packages/…`, project-relative, else the file name); hashes are untouched.

    python scripts/portable_paths.py [--root OTHER_CHECKOUT ...] results recordings reports  # files or directories

`--root` names another checkout of this project whose paths count as project paths (files written
from it); this checkout always counts.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from evalkit.results.portable import PROJECT_ROOT, portable_path

# the prefixes tests/test_committed_artifacts.py refuses; a path ends where JSON, HTML or a space would
MACHINE_PATH = re.compile(r"/(?:work|tmp|root|home)/[^\s\"'<>\\,;)]+")


def portable_text(text: str, roots: list[Path]) -> str:
    def replace(match: re.Match[str]) -> str:
        path = match.group(0)
        root = next((r for r in roots if path.startswith(f"{r}/")), roots[0])
        return portable_path(path, root)

    return MACHINE_PATH.sub(replace, text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", action="append", type=Path, default=[], help="another checkout of this project")
    parser.add_argument("paths", nargs="+", type=Path, help="files or directories")
    args = parser.parse_args(argv)
    roots = [PROJECT_ROOT, *args.root]
    for given in args.paths:
        for path in [given] if given.is_file() else sorted(p for p in given.rglob("*") if p.is_file()):
            text = path.read_text(encoding="utf-8")
            fixed = portable_text(text, roots)
            if fixed != text:
                path.write_text(fixed, encoding="utf-8")
                print(f"{path}: {len(MACHINE_PATH.findall(text))} paths rewritten")


if __name__ == "__main__":
    main()
