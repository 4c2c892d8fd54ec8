"""What a resume compares of the server phases two headers recorded (`phase_changes`), on the
committed forge-sim files: the 0.7.3 file's phases against the 0.10.0 file's differ in the release,
its interpreter path; a header against itself, or one from before `venv` was recorded against a
newer one of the same install, do not."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from evalkit.results.reader import load_results
from evalkit.run.config_diff import phase_changes

ROOT = Path(__file__).resolve().parents[2]


def _phases(version: str) -> list[Any]:
    headers = load_results([ROOT / f"results/forge-sim-{version}.jsonl"]).headers
    found = [h.backends["forge-proxy"]["started_by_evalkit"]["phases"] for h in headers if "forge-proxy" in h.backends]
    return found[0]  # type: ignore[no-any-return]


def test_the_two_committed_releases_differ_and_each_matches_itself() -> None:
    old, new = _phases("0.7.3"), _phases("0.10.0")
    assert phase_changes(old, old) == []
    changes = phase_changes(old, new)
    assert changes[0] == "phase 'forge': forge-guardrails 0.7.3 in the runs already in the file, 0.10.0 now"
    assert any(c.startswith("phase 'forge': its command was configs/../.forge/0.7.3/bin/python") for c in changes)


def test_a_header_without_venv_or_files_hash_is_no_change_against_the_same_install() -> None:
    old = copy.deepcopy(_phases("0.10.0"))
    old[1].pop("venv", None)  # as a header written before either was recorded
    old[1]["packages"][0].pop("files_sha256", None)
    newer = copy.deepcopy(old)
    newer[1]["venv"] = "../.forge/0.10.0"
    newer[1]["packages"][0]["files_sha256"] = "ab" * 32
    assert phase_changes(old, newer) == []
    edited = copy.deepcopy(newer)
    edited[1]["packages"][0]["files_sha256"] = "cd" * 32
    assert phase_changes(newer, edited) == [
        "phase 'forge': forge-guardrails 0.10.0 with other installed files (files_sha256 abababababab… in the runs "
        "already in the file, cdcdcdcdcdcd… now)"
    ]
    assert phase_changes(old, old[:1]) == ["2 server phases in the runs already in the file, 1 now"]
