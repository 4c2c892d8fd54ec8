"""Paths as committed artifacts store them: without this machine's directory layout.

Results headers and recordings are committed and compared across machines, so a path in them says
where a file sits in a portable frame (its Python environment, the project) rather than where it
sat here; the file's sha256, stored next to it, is what identifies it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

__all__ = ["PROJECT_ROOT", "portable_args", "portable_path"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent
_ENV_DIRS = ("site-packages", "dist-packages")


def portable_path(path: str | Path, project_root: Path = PROJECT_ROOT) -> str:
    """`site-packages/pkg/…` inside a Python environment, project-relative inside the project,
    else the file name only. Relative paths are already portable and come back unchanged."""
    text = str(path)
    pure = PurePosixPath(text)
    if not pure.is_absolute():
        return text
    parts = pure.parts
    env = [i for i, part in enumerate(parts) if part in _ENV_DIRS]
    if env:  # the innermost environment: a venv inside the project is still an environment
        return str(PurePosixPath(*parts[env[-1] :]))
    root = PurePosixPath(str(project_root))
    if pure.is_relative_to(root) and pure != root:
        return str(pure.relative_to(root))
    # anywhere else the directories are this machine's: only the name says anything elsewhere
    return pure.name


def portable_args(args: Iterable[str], project_root: Path = PROJECT_ROOT) -> list[str]:
    """A command line with every absolute path argument made portable (`portable_path`)."""
    return [portable_path(arg, project_root) if arg.startswith("/") else arg for arg in args]
