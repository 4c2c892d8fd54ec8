"""Matching tool-call arguments against scenario specs, for mocked results and for checks.

Small models vary case and spacing ("Paris" vs "paris "), and a check should not fail a correct call
over that, so string literals compare case-insensitively after stripping.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["args_match", "mentions", "value_matches"]

_MATCHERS = ("contains", "any_of", "regex")


def _norm(value: Any) -> Any:
    return value.strip().casefold() if isinstance(value, str) else value


def value_matches(spec: Any, actual: Any) -> bool:
    if isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in _MATCHERS:
        (kind, expected), = spec.items()
        text = actual if isinstance(actual, str) else json.dumps(actual)
        if kind == "contains":
            return str(expected).casefold() in text.casefold()
        if kind == "any_of":
            return any(value_matches(option, actual) for option in expected)
        return re.search(str(expected), text, re.IGNORECASE) is not None
    if isinstance(spec, (int, float)) and isinstance(actual, str):
        try:
            return float(actual) == float(spec)  # "3" for 3: the model's type slip, not a wrong value
        except ValueError:
            return False
    return bool(_norm(spec) == _norm(actual))


def args_match(spec: dict[str, Any], arguments: dict[str, Any] | None) -> bool:
    """Every key in `spec` is present in `arguments` with a matching value (extra keys are fine)."""
    if arguments is None:
        return False
    return all(key in arguments and value_matches(value, arguments[key]) for key, value in spec.items())


def mentions(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()
