"""Fixtures every test folder may use: the repository's root, and a writer of files under tmp_path."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_CACHE = "EVALKIT_CACHE_DIR"  # evalkit.scenario.cache.CACHE_ENV


def pytest_configure(config: pytest.Config) -> None:
    """The evalkit the tests run (in process and in the commands they start) keeps its scenario cache in
    a folder of the session's, never in the user's."""
    if _CACHE not in os.environ:
        os.environ[_CACHE] = tempfile.mkdtemp(prefix="evalkit-test-cache-")
        config.stash[_CACHE_KEY] = os.environ[_CACHE]


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_CACHE_KEY, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(_CACHE, None)


_CACHE_KEY = pytest.StashKey[str]()


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def write(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a file under tmp_path and return its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write
