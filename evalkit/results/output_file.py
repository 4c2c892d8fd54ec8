"""The files evalkit writes at a user's request: one place that checks an output path and writes it.

`check_output` runs before any work (a command checks every output it was given first, so an
unusable path costs nothing, and `gate --markdown "$GITHUB_STEP_SUMMARY"` with the variable unset
fails at once): an empty path, a directory or a file in the way, and an existing evalkit results
file are refused. A results file is replaced only by a command that writes results itself, when
the user asked for it (`run --resume`, `rescore` in place or with `--overwrite`): a report, a
profile, a log or a summary never lands on one (`sim fit -o victim.jsonl` once replaced 80 runs
with a profile).

`write_output` checks the same, and turns whatever the file system says (a read-only folder, a
full disk, a file-size limit) into an `OutputError` naming the option and the path: unusable
input, not a crash. A new or regular file is written through a temporary file in the same folder
and renamed, so a failed write leaves no half-written file; a device or pipe that already exists
(`/dev/stdout`) is written in place, since renaming over it would replace it.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from pydantic_core import from_json

from evalkit.errors import OutputError

__all__ = ["check_output", "check_output_folder", "holds_results", "write_output"]

_FIRST_LINE_MAX = 1 << 20  # a header line is a few KB (the config and the backends' provenance)
_HEADER_START = re.compile(rb'\s*\{\s*"type"\s*:\s*"header"')  # how the writer starts a header line


def holds_results(path: Path) -> bool:
    """Whether `path` is a regular file whose first record is an evalkit results header."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            # bounded: a multi-gigabyte file without a newline must not be read whole to be refused
            line = fh.readline(_FIRST_LINE_MAX)
            while line and line.isspace():
                line = fh.readline(_FIRST_LINE_MAX)
    except OSError:
        return False
    try:
        record = from_json(line)
    except ValueError:  # cut short (a line longer than the limit): the writer's own way to start one
        return _HEADER_START.match(line) is not None
    return isinstance(record, dict) and record.get("type") == "header"


def _checked_path(path: str | Path, where: str) -> Path:
    """A non-empty path with no file where one of its folders should be."""
    if not str(path):
        raise OutputError(f"{where}: an empty path (an unset environment variable?)")
    target = Path(path)
    # the nearest existing folder: a file there would make every later step fail with a vaguer error
    ancestor = next((p for p in target.parents if p.exists()), None)
    if ancestor is not None and not ancestor.is_dir():
        raise OutputError(f"{where}: cannot write: {ancestor} is not a directory")
    return target


def check_output(
    path: str | Path, *, option: str = "", replace_results: bool = False, overwrite_flag: str | None = None
) -> Path:
    """`path` as an output file of `option`: not empty, no directory or file in the way, and no existing
    results file unless `replace_results` (a command writing results, asked to by `overwrite_flag`,
    which the refusal names). Nothing is written."""
    where = f"{option} {str(path) or repr('')}".strip()
    target = _checked_path(path, where)
    if target.is_dir():
        raise OutputError(f"{where}: cannot write: Is a directory")
    if not replace_results and holds_results(target):
        if overwrite_flag:
            raise OutputError(f"{where}: holds evalkit results: pass {overwrite_flag} to replace them")
        raise OutputError(f"{where}: holds evalkit results, which this command does not replace: choose another path")
    return target


def check_output_folder(path: str | Path, *, option: str) -> Path:
    """`path` as a folder `option` writes into: not empty, not a file, no file in the way."""
    where = f"{option} {str(path) or repr('')}".strip()
    target = _checked_path(path, where)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{where}: not a directory")
    return target


def write_output(path: str | Path, text: str, *, option: str = "", append: bool = False) -> Path:
    """Write (or with `append`, add to) `path`; any failure is an OutputError for `option`."""
    where = f"{option} {str(path) or repr('')}".strip()
    target = check_output(path, option=option)
    try:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a regular file where a folder of the path should be
            raise NotADirectoryError(20, "Not a directory (a file is in the way)") from None
        if target.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        # a device or pipe (`/dev/stdout`) is written in place: renaming over it would replace it
        if append or (target.exists() and not target.is_file()):
            with target.open("a" if append else "w", encoding="utf-8") as out:
                out.write(text)
        else:
            _replace(target, text)
    except OSError as exc:
        raise OutputError(f"{where}: cannot write: {exc.strerror or exc}") from exc
    return target


def _replace(target: Path, text: str) -> None:
    # in the target's folder: the rename stays within one file system, so it is atomic
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a report from a web server or a colleague
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
