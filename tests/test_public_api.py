"""The public surface stays small, sorted and importable (after httpx's test_exported_members)."""

from __future__ import annotations

import importlib
import warnings

import pytest

import evalkit
from evalkit._imports import load_class


def test_all_is_sorted_and_complete():
    assert list(evalkit.__all__) == sorted(evalkit.__all__)
    for name in evalkit.__all__:
        assert getattr(evalkit, name) is not None


def test_every_error_derives_from_the_root():
    from evalkit import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), evalkit.EvalkitError)


PACKAGES = [
    "evalkit.stats",
    "evalkit.results",
    "evalkit.backends",
    "evalkit.strategies",
    "evalkit.report",
    "evalkit.gate",
]


def _isort_order(name: str) -> tuple[int, str]:
    """ruff's order for `__all__` (RUF022): CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_each_folder_exports_a_sorted_importable_all(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names == sorted(names, key=_isort_order), f"{package}.__all__ is not sorted"
    for name in names:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_paths_the_readme_names_keep_their_names() -> None:
    from evalkit.gate import compare
    from evalkit.results import RunRecord, load_results
    from evalkit.stats import wilson

    assert callable(compare) and callable(load_results) and callable(wilson)
    assert RunRecord.model_fields["run_id"] is not None


def test_a_module_path_loads_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_class("evalkit.strategies.retry_nudge:RetryNudge").name == "retry_nudge"
