"""evalkit's version: here, below every layer, so that any module can record it (a results header, a
report's footer, the scenario cache's key) without importing the package root, which sits above them
all. `evalkit.__version__` re-exports it, and pyproject.toml reads it for the build."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
