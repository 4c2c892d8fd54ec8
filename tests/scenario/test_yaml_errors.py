"""The YAML reader's limits hold while reading: each test is the input that broke it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit._yaml import MAX_ALIASES, MAX_BYTES, MAX_DEPTH, read_yaml
from evalkit.errors import ScenarioError


def problem_of(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        read_yaml(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))
    return info.value.problem


def test_490_levels_of_flow_nesting_is_a_one_line_error_not_recursion_error(write):
    # PyYAML's composer recursed ~3 frames per level and hit RecursionError before our depth check
    path = write("deep.yaml", "a: " + "[" * 490 + "]" * 490 + "\n")
    assert problem_of(path) == f"nested deeper than {MAX_DEPTH} levels"


def test_deep_block_nesting_is_stopped_while_composing(write):
    text = "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v\n"
    assert problem_of(write("block.yaml", text)) == f"nested deeper than {MAX_DEPTH} levels"


def test_nesting_at_the_limit_is_read(write):
    depth = MAX_DEPTH - 1  # the top-level mapping is one level
    data = read_yaml(write("ok.yaml", "a: " + "[" * depth + "]" * depth + "\n")).data
    for _ in range(depth):
        data = data["a"] if isinstance(data, dict) else data[0]


def test_alias_count_is_limited_while_composing(write):
    text = "x: &x 1\ny: [" + ", ".join(["*x"] * (MAX_ALIASES + 1)) + "]\n"
    assert problem_of(write("aliases.yaml", text)) == f"more than {MAX_ALIASES} aliases"


def test_self_referencing_anchor_is_an_error(write):
    assert "nested deeper" in problem_of(write("cycle.yaml", "a: &a [*a]\n"))


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    assert "not a regular file" in problem_of(fifo)


def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path):
    link = tmp_path / "scenario.yaml"
    link.symlink_to("/dev/zero")
    assert "not a regular file" in problem_of(link)


def test_the_size_limit_is_checked_before_reading(tmp_path):
    # a sparse 4 GB file: reading it whole (as before) would exhaust memory; the size comes from stat
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:
        fh.truncate(4 * 1024**3)
    assert problem_of(path) == f"file is {4 * 1024**3} bytes; the limit is {MAX_BYTES}"


def test_an_integer_too_long_for_python_is_a_one_line_error(write):
    assert problem_of(write("int.yaml", "a: " + "1" * 5000 + "\n")).startswith("cannot read value:")


def test_a_directory_and_a_missing_file_are_one_line_errors(tmp_path):
    assert problem_of(tmp_path).startswith(("not a regular file", "cannot read"))
    assert problem_of(tmp_path / "missing.yaml").startswith("cannot read")
