"""The skips of tests that need an extra name extras pyproject.toml declares (tests/extras.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.extras import declared_extras, needs_extra

TESTS = Path(__file__).resolve().parent


def test_every_extra_is_named_as_pyproject_declares_it() -> None:
    users = [p for p in TESTS.rglob("*.py") if p.name != "test_extras.py"]
    named = {m for p in users for m in re.findall(r'needs_extra\("([^"]+)"\)', p.read_text("utf-8"))}
    assert named and named <= declared_extras()
    assert needs_extra("bfcl") == "needs the bfcl extra: pip install -e '.[bfcl]'"
    with pytest.raises(ValueError, match="no extra 'bfcl_eval'"):
        needs_extra("bfcl_eval")
