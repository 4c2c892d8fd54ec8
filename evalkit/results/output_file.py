"""Writing a file the user asked for (a report, a gate's JUnit XML or markdown summary).

Whatever the file system says (a read-only folder, a full disk, a file-size limit, a directory or a
regular file in the way, an empty path from an unset variable such as `$GITHUB_STEP_SUMMARY`) becomes
an `OutputError` naming the option and the path: unusable input, not a crash. A new or regular file
is written through a temporary file in the same folder and renamed, so a failed write leaves no
half-written file; a device or pipe that already exists (`/dev/stdout`) is written in place, since
renaming over it would replace it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from evalkit.errors import OutputError

__all__ = ["write_output"]


def write_output(path: str | Path, text: str, *, option: str = "", append: bool = False) -> Path:
    """Write (or with `append`, add to) `path`; any failure is an OutputError for `option`."""
    where = f"{option} {str(path) or repr('')}".strip()
    if not str(path):
        raise OutputError(f"{where}: an empty path (an unset environment variable?)")
    target = Path(path)
    try:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a regular file where a folder of the path should be
            raise NotADirectoryError(20, "Not a directory (a file is in the way)") from None
        if target.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        if append or (target.exists() and not target.is_file()):
            with target.open("a" if append else "w", encoding="utf-8") as out:
                out.write(text)
        else:
            _replace(target, text)
    except OSError as exc:
        raise OutputError(f"{where}: cannot write: {exc.strerror or exc}") from exc
    return target


def _replace(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a report from a web server or a colleague
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
