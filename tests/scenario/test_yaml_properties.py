"""Property tests for the YAML reader: whatever the bytes, only `ScenarioError`, bounded work,
and plain data round-trips."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit._yaml import MAX_DEPTH, read_yaml
from evalkit.errors import ScenarioError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

YAML_PIECES = st.sampled_from(
    [
        "a",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "&x ",
        "*x",
        "!!python/object:os.system ",
        "!!binary ",
        "!tag ",
        "<<: ",
        "---\n",
        "...\n",
        "\n",
        "  ",
        "'",
        '"',
        "|\n",
        ">\n",
        "#",
        "? ",
        "%YAML 1.1\n",
        "\t",
        "\\",
        "1e400",
        "0x1F",
        "~",
        "null",
        "yes",
        "2001-12-14",
        "\x00",
        "\ufeff",
        "é",
    ]
)


def read_text(tmp_path: Path, content: str | bytes) -> Any:
    path = tmp_path / "doc.yaml"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_bytes(content)
    try:
        return read_yaml(path).data
    except ScenarioError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
        return exc


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes_give_data_or_a_scenario_error(tmp_path, raw):
    read_text(tmp_path, raw)


@SETTINGS
@given(st.text(max_size=2000))
def test_random_text_gives_data_or_a_scenario_error(tmp_path, text):
    read_text(tmp_path, text)


@SETTINGS
@given(st.lists(YAML_PIECES, max_size=200))
def test_adversarial_yaml_fragments_give_data_or_a_scenario_error(tmp_path, pieces):
    read_text(tmp_path, "".join(pieces))


@SETTINGS
@given(st.integers(1, 3000), st.sampled_from(["[", "{a: ", "- "]))
def test_any_nesting_depth_is_read_or_refused(tmp_path, depth, opener):
    closer = {"[": "]", "{a: ": "}", "- ": ""}[opener]
    if opener == "- ":
        text = "a:\n" + "".join("  " * (i + 1) + "-\n" for i in range(depth - 1)) + "  " * depth + "- 1\n"
    else:
        text = "a: " + opener * depth + "1" + closer * depth + "\n"
    result = read_text(tmp_path, text)
    if depth < MAX_DEPTH - 1:
        assert not isinstance(result, ScenarioError)
    elif depth > MAX_DEPTH:
        assert isinstance(result, ScenarioError)


@SETTINGS
@given(st.integers(1, 12), st.integers(2, 12))
def test_alias_bombs_are_refused(tmp_path, levels, width):
    lines = ["a0: &a0 [x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    result = read_text(tmp_path, "\n".join(lines) + "\n")
    if width**levels > 1_000_000:
        assert isinstance(result, ScenarioError)


@SETTINGS
@given(st.integers(0, 1_500_000), st.sampled_from(["x", "1", "é"]))
def test_huge_scalars_are_read_or_refused(tmp_path, size, char):
    read_text(tmp_path, "a: " + char * size + "\n")


KEYS = st.text(string.ascii_letters + string.digits + "_-", min_size=1, max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=False) | st.text(max_size=40)
PLAIN = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=30
)


@SETTINGS
@given(st.dictionaries(KEYS, PLAIN, min_size=1, max_size=6))
def test_plain_data_reads_as_pyyaml_reads_it(tmp_path, data):
    # PyYAML itself does not round-trip every string (an unquoted NEL reads back as a space), so the
    # reference is PyYAML's own safe loader (on the same parser we build on) on the same text: our
    # limits may refuse, never differ.
    text = yaml.safe_dump(data, allow_unicode=True)
    result = read_text(tmp_path, text)
    if isinstance(result, ScenarioError):
        # only the documented limits may refuse plain data (depth is bounded by max_leaves here)
        raise AssertionError(f"plain data refused: {result}")
    assert result == yaml.load(text, Loader=yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
