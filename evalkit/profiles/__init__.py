"""The simulated model's shipped profiles (YAML, read by `evalkit.backends.sim_profile`): hand-written
ones here, those `evalkit sim fit` measured under `fitted/`. A package of its own so that naming them
(`evalkit list profiles`, the error for an unknown one) imports no backend."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROFILE_DIR", "profile_names"]

PROFILE_DIR = Path(__file__).resolve().parent


def profile_names() -> list[str]:
    """The shipped profiles by the names `load_profile` takes, as `evalkit list profiles` shows them:
    the hand-written ones, then those measured by `evalkit sim fit` (`fitted/smollm2`)."""
    names = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
    return names + sorted(f"fitted/{p.stem}" for p in PROFILE_DIR.glob("fitted/*.yaml"))
