"""The BFCL v4 data shipped in the installed `bfcl-eval` package (no network): categories, cases, credit."""

from __future__ import annotations

import importlib.util
import re
from importlib import metadata, resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import from_json

from evalkit._model import first_problem
from evalkit.errors import EvalkitError

__all__ = [
    "ALIASES",
    "CATEGORIES",
    "BfclMissing",
    "FunctionDoc",
    "attribution",
    "data_dir",
    "load_category",
    "read_lines",
]

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


def data_dir(folder: Path | None = None) -> Any:
    """BFCL's data folder: `folder` when given (laid out as bfcl_eval/data is), else the installed package's."""
    if folder is not None:
        return folder
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError as exc:
        raise BfclMissing("not installed") from exc


class _Shape(BaseModel):
    """The fields of BFCL's records the converter reads, typed; the records themselves stay dicts."""

    model_config = ConfigDict(extra="allow")


class _Message(_Shape):
    role: str
    content: str


class _Property(_Shape):
    type: str = "string"
    description: str = ""
    items: _Property | None = None
    properties: dict[str, _Property] | None = None


class _Parameters(_Shape):
    properties: dict[str, _Property] = {}
    required: list[str] = []


class FunctionDoc(_Shape):
    name: str
    description: str = ""
    parameters: _Parameters = _Parameters()


class _Case(_Shape):
    id: str
    question: list[list[_Message]]
    function: list[FunctionDoc] = []
    involved_classes: list[str] = []
    initial_config: dict[str, dict[str, Any]] = {}
    missed_function: dict[str, list[str]] = {}
    excluded_function: list[str] = []


class _Answer(_Shape):
    id: str
    # one {function: {parameter: [acceptable values]}} per call
    ground_truth: list[Annotated[dict[str, dict[str, list[Any]]], Field(min_length=1, max_length=1)]]


class _MultiTurnAnswer(_Shape):
    id: str
    ground_truth: list[list[str]]  # the call strings of each turn


def read_lines(file: Any, shape: type[BaseModel] | None = None) -> list[dict[str, Any]]:
    """A BFCL data file's records, one JSON object a line, each checked against `shape`; a line that
    is not one is an error naming the file, the line and the field."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalkitError(f"{file}: cannot read BFCL data: {exc}") from None
    out = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = from_json(line)
        except ValueError as exc:
            raise EvalkitError(f"{file}:{lineno}: not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise EvalkitError(f"{file}:{lineno}: not a JSON object")
        try:
            (shape or _Shape).model_validate(record)
        except ValidationError as exc:
            problem = first_problem(exc)
            raise EvalkitError(f"{file}:{lineno}: {problem.field}: {problem.message}") from None
        out.append(record)
    return out


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


def load_category(category: str, folder: Path | None = None) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The category's cases, each with its possible answer (None for (ir)relevance categories), from
    `folder` or the installed package's data."""
    category = ALIASES.get(category, category)
    base = data_dir(folder)
    answer_file = base / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {}
    if answer_file.is_file():
        shape = _MultiTurnAnswer if category.startswith("multi_turn") else _Answer
        answers = {entry["id"]: entry for entry in read_lines(answer_file, shape)}
    cases = read_lines(base / f"BFCL_v4_{category}.json", _Case)
    return [(case, answers.get(case["id"])) for case in cases]
