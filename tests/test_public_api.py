"""The public surface stays small, sorted and importable (after httpx's test_exported_members)."""

from __future__ import annotations

import evalkit


def test_all_is_sorted_and_complete():
    assert list(evalkit.__all__) == sorted(evalkit.__all__)
    for name in evalkit.__all__:
        assert getattr(evalkit, name) is not None


def test_every_error_derives_from_the_root():
    from evalkit import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), evalkit.EvalkitError)
