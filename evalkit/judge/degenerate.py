"""Degenerate output: a reply that is not a reply, whatever a scenario's check would say of it.

Small models, and base models behind the wrong chat template, often answer with the template's own
control tokens (``<|im_end|>\\n<|im_start|>user``), writing both sides of the conversation, or loop
on one line. A substring check can pass such text ("hi" is in it), so `checks.judge_run` fails any
final reply (or `respond` message) that `degenerate_reason` flags, as `degenerate_output`:

- **template turns**: it opens a new turn with a start-of-turn token (ChatML ``<|im_start|>``, Gemma
  ``<start_of_turn>``, Llama 3 ``<|start_header_id|>``, Mistral ``[INST]``, ...), goes on writing
  after an end-of-turn token (``<|im_end|>``, ``<end_of_turn>``, ``<|eot_id|>``), or
  two or more control tokens make up at least a quarter of its visible text;
- **empty**: nothing but control tokens, role labels and punctuation is left once they are removed;
- **a loop**: one line (at least 4 lines in all) makes up half of the non-empty lines or more.

Ordinary short replies ("Hello! How can I help?") are never degenerate (a property test holds that).
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["degenerate_reason"]

# Turn openers of the common chat-template families; a reply that contains one writes a new turn.
_OPENERS = re.compile(
    r"<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>|\[INST\]|<\|(?:user|assistant|system)\|>"
    r"|<\|begin_of_text\|>|<\|startoftext\|>",
    re.IGNORECASE,
)
# (not `</s>`: HTML's strikethrough closes with it; Mistral's turns are caught by `[INST]`)
_CLOSERS = re.compile(r"<\|im_end\|>?|<end_of_turn>|<\|eot_id\|>|<\|end\|>|<\|endoftext\|>|\[/INST\]", re.IGNORECASE)
# Every control token: the openers, closers and specials of those families, any <|name|>, and the
# broken halves that small models emit (``<|im_end|``, ``<|``).
_CONTROL = re.compile(
    r"<\|[A-Za-z0-9_]*\|?>?|<\|"
    r"|</?(?:start_of_turn|end_of_turn|s|bos|eos|pad|unk)>"
    r"|\[/?(?:INST|SYS|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]|<</?SYS>>",
    re.IGNORECASE,
)
_ROLE_AFTER_TOKEN = re.compile(r"(?<=[>|\]])\s*(?:user|assistant|system|model|tool)\b\|?", re.IGNORECASE)
_NOTHING_LEFT = re.compile(r"[\W_]*", re.UNICODE)
_TOKEN_SHARE = 0.25
_MIN_LOOP_LINES = 4


def _without_tokens(text: str) -> str:
    return _CONTROL.sub(" ", _ROLE_AFTER_TOKEN.sub(" ", text))


def degenerate_reason(text: str | None) -> str | None:
    """Why `text` is degenerate output, or None for a real reply (None and '' are 'no reply', not this)."""
    # no reply is its own failure (the check's `reply` item), not degenerate output
    if not text or not text.strip():
        return None
    tokens = _CONTROL.findall(text)
    if tokens:
        shown = ", ".join(sorted(set(tokens))[:4])
        stripped = _without_tokens(text)
        if _NOTHING_LEFT.fullmatch(stripped):
            return f"empty once {len(tokens)} chat-template control tokens are removed ({shown})"
        opener = _OPENERS.search(text)
        if opener:
            return f"writes chat-template turns: {opener.group(0)} ({len(tokens)} control tokens: {shown})"
        closer = _CLOSERS.search(text)
        if closer and not _NOTHING_LEFT.fullmatch(_without_tokens(text[closer.end() :])):
            return f"goes on after the end-of-turn token {closer.group(0)} ({len(tokens)} control tokens: {shown})"
        # whitespace left out: a token in a short reply padded with newlines is still most of it
        visible = len(re.sub(r"\s", "", text))
        share = sum(len(t) for t in tokens) / visible
        if len(tokens) >= 2 and share >= _TOKEN_SHARE:  # one trailing end token is harmless
            return f"{share:.0%} chat-template control tokens ({shown})"
    return _loop_reason(text)


def _loop_reason(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < _MIN_LOOP_LINES:
        return None
    line, count = Counter(lines).most_common(1)[0]
    # at least three times: a list with one repeated heading is no loop
    if count >= 3 and count * 2 >= len(lines):
        return f"repeats the line {line[:60]!r} {count} times in {len(lines)} lines"
    return None
