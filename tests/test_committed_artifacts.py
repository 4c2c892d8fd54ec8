"""Committed artifacts (results, recordings, reports) carry no absolute path of the machine that made them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACT_DIRS = ("results", "recordings", "reports")
MACHINE_PATH = re.compile(r"/(?:work|tmp|root|home)/")


def artifacts() -> list[Path]:
    return sorted(p for d in ARTIFACT_DIRS for p in (ROOT / d).rglob("*") if p.is_file())


def test_there_are_artifacts_to_scan() -> None:
    assert {p.relative_to(ROOT).parts[0] for p in artifacts()} == set(ARTIFACT_DIRS)


@pytest.mark.parametrize("path", artifacts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_path_in(path: Path) -> None:
    data = path.read_bytes().decode("utf-8", errors="replace")
    found = sorted({data[m.start() : m.start() + 60].split('"')[0] for m in MACHINE_PATH.finditer(data)})
    assert not found, f"{path.relative_to(ROOT)}: absolute machine paths {found[:3]}"
