"""The phase supervisor's pieces without processes: its log redaction, whatever the reads' boundaries,
and a header's config with every server phase's `env:` value blanked."""

from __future__ import annotations

import base64
import io

import pytest

from evalkit.backends.phase_supervisor import _Redactor
from evalkit.results.secrets import REDACTED, public_config

KEY = "sk-4f9e2d1c0b8a7f6e"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_a_secret_cut_between_reads_is_blanked_whole(size: int) -> None:
    """The output arrives in reads of `size` bytes: no read boundary lets a secret (or its base64,
    or a multi-byte character) through."""
    text = f"héllo {KEY} and {base64.b64encode(KEY.encode()).decode()}\nlast: {KEY}"
    log = io.StringIO()
    redactor = _Redactor(log, [KEY])
    data = text.encode()
    for start in range(0, len(data), size):
        redactor.write(data[start : start + size])
    redactor.write(b"", final=True)
    assert log.getvalue() == f"héllo {REDACTED} and {REDACTED}\nlast: {REDACTED}"


def test_a_whole_line_is_written_at_once() -> None:
    """A finished line reaches the log without waiting for more output (errors quote the last line)."""
    log = io.StringIO()
    _Redactor(log, [KEY]).write(b"ready\n")
    assert log.getvalue() == "ready\n"


def test_a_header_keeps_a_phase_env_names_not_its_values() -> None:
    phases = [{"command": ["a"], "env": {"API_KEY": KEY, "MODE": "strict"}}, {"command": ["b"]}]
    config = {"backends": [{"label": "x", "serve": {"phases": phases}}]}
    (backend,) = public_config(config)["backends"]
    assert backend["serve"]["phases"] == [
        {"command": ["a"], "env": {"API_KEY": REDACTED, "MODE": REDACTED}},
        {"command": ["b"]},
    ]
