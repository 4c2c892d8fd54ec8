"""Degenerate output (evalkit.judge.degenerate): real replies from the committed results, and ordinary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.judge.degenerate import degenerate_reason

REAL_DEGENERATE = [
    # results/compare-models.jsonl smollm2/prompt/respond_tool/greet-hi/2: a loop of lines
    "just call respond, and it's sent to your device.\n\nthat's pretty cool. you can just call respond.\n\n"
    "i'm here to help, and it's just a simple code snippet. just call respond.\n\ni'm here to help, and it's just a "
    "simple code snippet.\n\nthat's pretty cool. you can just call respond.\n\nthat's pretty cool. you can just call "
    "respond.\n\nthat's pretty cool. you can just call respond.\n\nthat's pretty cool. you can just call respond.\n\n"
    "that's pretty cool. you can just call respond.",
    # results/compare-models.jsonl gemma3-270m/prompt/trust_text/greet-hi/0: Gemma's template-token greeting
    "<|im_end|>\n<|im_start|>user|\n<|im_end|>\n<|im_start|>assistant|\n<|im_end|>\n<|im_start|>user|\n<|im_end|>\n"
    "<|im_start|>assistant|\n<|im_end|>\n<|im_start|>user|\n<|im_end|>\n<|im_start|>assistant|\n<|im_end|>\n"
    "<|im_start|>user|\n<|im_end|>\n<|im_start|>assistant|\n",
    # results/compare-models.jsonl gemma3-270m/prompt/retry_nudge/rel-square-root/0
    "<|im_end|>user\n<|im_end|>user\n<|im_end|>user\n<|im_start|>user\n<|im_start|>user\nYour previous reply was not "
    "a valid tool call. A tool call is required here, not free text. Call one of the available tools now.<|im_end|>\n"
    "<|im_start|>user\n<|im_end|>user\n<|im_end|>user\n<|im_start|>user\n<|im_start|>user\nYour previous reply was "
    "not a valid tool call. A tool call",
    # results/adr013.jsonl smollm2/native/trust_text/gap-hr-profile/12: a loop of '#' lines
    "To create a report, use the tools provided to create a summary of the report, and then use the code to create "
    "the report.\n\n```\n# To create a summary report of the report,\n# \n# \n# Report:\n# \n# \n# \n# Summary of "
    "the report:\n" + "# \n" * 20,
    # results/adr013.jsonl gemma3-270m/prompt/trust_text/greet-hi/0: "hi" is in it, a reply it is not
    "hi<|im_end|>\n<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n\n<|im_end|>user\nhi<|im_end|>\n<|im_end|>assistant\n"
    "hi<|im_end|>\n<|im_end|>user\nhi<|im_end|>\n<|im_end|>user\nhi<|im_end|>\n<|im_end|>user\nhi<|im_end|>user\n"
    "hi<|im_end|>user\nhi<|im_end|>",
    # results/adr013.jsonl gemma3-270m (a nudge echoed past its end-of-turn token)
    "Reply by calling a tool. To talk to the user, call reply(message=...).<|im_end|>\n\nYou can create a new tool",
]
OTHER_FAMILIES = [
    "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\nhi<end_of_turn>",  # Gemma
    "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",  # Llama 3
    "[INST] hi [/INST] hello</s>[INST] hi [/INST]",  # Mistral
    "<|eot_id|><|eot_id|>",  # nothing left
    "</s>",
    "<|user|>\nhi<|end|>\n<|assistant|>",  # Phi
]
REAL_REPLIES = [  # SmolLM2's greetings in the committed results: poor, but real replies
    "Hello! I'm here to help with the programming language of your choice. How can I assist you?",
    "I'm happy to help with your coding challenges! What's on your computer?",
    "Hello! How can I assist you?",
    "The square root of 144 is approximately 2.3333.",
    "Hello! How can I help?",
    "Hello! How can I help?<|im_end|>",  # one trailing end token: the server did not strip it
    "Steps:\n1. Open the file.\n2. Fix the typo.\n3. Save it.\n4. Done.",
    "x < y, and a|b is a pipe.",
    "In HTML, write <s>old price</s> to strike a price through, then the new price after it.",
]


@pytest.mark.parametrize("text", REAL_DEGENERATE + OTHER_FAMILIES)
def test_degenerate_output_is_named(text: str) -> None:
    assert degenerate_reason(text)


@pytest.mark.parametrize("text", REAL_REPLIES)
def test_real_replies_are_not_degenerate(text: str) -> None:
    assert degenerate_reason(text) is None


def test_what_was_detected_is_said() -> None:
    assert "<|im_start|>" in (degenerate_reason(REAL_DEGENERATE[1]) or "")
    assert "repeats the line" in (degenerate_reason(REAL_DEGENERATE[0]) or "")
    assert degenerate_reason("") is None and degenerate_reason(None) is None  # no reply is another failure


words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=9)
sentences = (
    st.lists(words, min_size=1, max_size=12)
    .map(lambda ws: " ".join(ws))
    .flatmap(lambda s: st.sampled_from([".", "!", "?", ",", ""]).map(lambda p: s + p))
)


@settings(max_examples=300, deadline=None)
@given(st.lists(sentences, min_size=1, max_size=6, unique=True), st.sampled_from([" ", "\n", "\n\n"]))
def test_ordinary_text_is_never_degenerate(lines: list[str], joiner: str) -> None:
    assert degenerate_reason(joiner.join(lines)) is None
