"""The BFCL v4 data shipped in the installed `bfcl-eval` package (no network): categories, cases, credit."""

from __future__ import annotations

import importlib.util
import json
import re
from importlib import metadata, resources
from typing import Any

from evalkit.errors import EvalkitError

__all__ = ["ALIASES", "CATEGORIES", "BfclMissing", "attribution", "data_dir", "load_category"]

CATEGORIES = {  # BFCL category -> evalkit family
    "simple_python": "tool_selection",
    "multiple": "tool_selection",
    "parallel": "tool_selection",
    "parallel_multiple": "tool_selection",
    "live_simple": "tool_selection",
    "live_multiple": "tool_selection",
    "live_parallel": "tool_selection",
    "live_parallel_multiple": "tool_selection",
    "irrelevance": "relevance_detection",
    "live_irrelevance": "relevance_detection",
    "live_relevance": "relevance_detection",
    "simple_java": "tool_selection",
    "simple_javascript": "tool_selection",
    "multi_turn_base": "multi_turn",
    "multi_turn_miss_func": "multi_turn",
    "multi_turn_miss_param": "data_gap_recovery",
    "multi_turn_long_context": "multi_turn",
}
ALIASES = {"java": "simple_java", "javascript": "simple_javascript", "python": "simple_python"}


class BfclMissing(EvalkitError):
    def __init__(self, detail: str) -> None:
        super().__init__(
            f"bfcl-eval is not usable ({detail}); install the optional extra: pip install 'evalkit[bfcl]' "
            "(or, without its heavy dependencies: pip install --no-deps 'bfcl-eval>=2026.3.23' filelock mpmath)"
        )


def require_bfcl() -> None:
    """The optional package, before anything reads its data or metadata."""
    try:
        found = importlib.util.find_spec("bfcl_eval") is not None
        metadata.version("bfcl-eval")
    except (metadata.PackageNotFoundError, ImportError, ValueError):
        found = False
    if not found:
        raise BfclMissing("not installed")


def data_dir() -> Any:
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError as exc:
        raise BfclMissing("not installed") from exc


def attribution() -> tuple[str, str]:
    meta = metadata.metadata("bfcl-eval")
    version = metadata.version("bfcl-eval")
    emails = ", ".join(meta.get_all("Author-email") or [])
    authors = re.sub(r"\s*<[^>]*>", "", emails) or "Gorilla project, UC Berkeley"
    text = (
        f"Berkeley Function Calling Leaderboard (BFCL) v4 data from bfcl-eval {version} ({authors}); "
        "converted by evalkit"
    )
    return ", ".join(meta.get_all("License") or []) or "Apache 2.0", text


def load_category(category: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The category's cases, each with its possible answer (None for (ir)relevance categories)."""
    category = ALIASES.get(category, category)
    base = data_dir()
    questions = (base / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()
    answer_file = base / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {}
    if answer_file.is_file():
        for line in answer_file.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            answers[entry["id"]] = entry
    cases = [json.loads(line) for line in questions if line.strip()]
    return [(case, answers.get(case["id"])) for case in cases]
