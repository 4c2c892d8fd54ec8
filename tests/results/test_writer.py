"""`truncate_partial_line` reads backwards from the end in blocks (a resume must not read a large
file whole); whatever the bytes, it keeps exactly the whole lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.results.writer import truncate_partial_line


def _whole_lines(data: bytes) -> bytes:
    return data[: data.rfind(b"\n") + 1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300).map(lambda b: b.replace(b"\r", b"")))
def test_only_whole_lines_are_kept(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    truncate_partial_line(path)
    assert path.read_bytes() == _whole_lines(data)


@pytest.mark.parametrize("tail", [0, 1, 65535, 65536, 65537, 200_000])
def test_a_partial_line_longer_than_a_block(tmp_path: Path, tail: int) -> None:
    data = b'{"type":"header"}\n' * 3 + b"x" * tail
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    truncate_partial_line(path)
    assert path.read_bytes() == b'{"type":"header"}\n' * 3


def test_a_file_without_any_newline_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"y" * 70_000)
    truncate_partial_line(path)
    assert path.read_bytes() == b""
