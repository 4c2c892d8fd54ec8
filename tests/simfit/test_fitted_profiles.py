"""The committed fitted profiles are what scripts/fit_profiles.py makes from the committed results."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.extras import needs_extra

ROOT = Path(__file__).resolve().parents[2]


def test_committed_fitted_profiles_match_the_script() -> None:
    # the fit replays the committed BFCL multi-turn runs, whose mocks are classes of bfcl_eval
    pytest.importorskip("bfcl_eval", reason=needs_extra("bfcl"))
    spec = importlib.util.spec_from_file_location("fit_profiles", ROOT / "scripts" / "fit_profiles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = os.getcwd()
    try:
        stale = module.stale()
    finally:
        os.chdir(before)
    assert stale == [], f"stale fitted profiles {stale}: run python scripts/fit_profiles.py"
