"""The counting pass-through reads tokens from answers a model server wrote: untrusted bodies."""

from __future__ import annotations

import json

import pytest

from evalkit.backends.passthrough import answer_tokens

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("body", "stream", "tokens"),
    [
        (json.dumps({"usage": {"prompt_tokens": 12, "completion_tokens": 3}}).encode(), False, (12, 3)),
        (json.dumps({"usage": {"input_tokens": 7, "output_tokens": 2}}).encode(), False, (7, 2)),
        (json.dumps({"tokens_evaluated": 9, "tokens_predicted": 4}).encode(), False, (9, 4)),
        (json.dumps({"prompt_eval_count": 5, "eval_count": 1}).encode(), False, (5, 1)),
        (
            b'data: {"usage": {"prompt_tokens": 4, "completion_tokens": 1}}\ndata: {"usage": '
            b'{"prompt_tokens": 4, "completion_tokens": 6}}\ndata: [DONE]\n',
            True,
            (4, 6),
        ),
        (DEEP, False, (0, 0)),  # nested past any parser's depth
        (b"data: " + DEEP + b"\n", True, (0, 0)),
        (b'{"usage": {"prompt_tokens": [1], "completion_tokens": {"a": 1}}}', False, (0, 0)),
        (b'{"usage": {"prompt_tokens": 1e400, "completion_tokens": -3}}', False, (0, 0)),
        (b'{"usage": {"prompt_tokens": true, "completion_tokens": "12"}}', False, (0, 0)),
        (b'{"message": 5, "usage": null}', False, (0, 0)),
        (b"\xff\xfe not utf-8", False, (0, 0)),
    ],
)
def test_tokens_are_read_from_a_sane_answer_and_zero_from_a_hostile_one(
    body: bytes, stream: bool, tokens: tuple[int, int]
) -> None:
    assert answer_tokens(body, stream) == tokens
