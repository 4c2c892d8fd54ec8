"""Counts in words: "1 file", "2 files", "1 infra error" (never "1 infra errors")."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n` and `noun`, in the plural (`many`, by default `noun` + "s") unless `n` is 1."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"
