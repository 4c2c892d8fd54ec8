"""BFCL's own checker, called directly on a model's output: the reference evalkit's `bfcl` matching
mode is held against (tests/bfcl) and the second opinion `evalkit report` shows beside evalkit's.

Importing this module imports `bfcl_eval` (the optional extra): import it inside the function that
needs it, never at a CLI module's top.

Importing `ast_checker` pulls in `bfcl_eval.constants.model_config`, which imports ~60 API handlers
(and torch). The checker only reads `MODEL_CONFIG_MAPPING[name].underscore_to_dot`, so a stub module
stands in for it: one function-calling model whose tool names have dots replaced by underscores, as
BFCL does for OpenAI-style models (and as `evalkit import bfcl` names the tools).
"""

from __future__ import annotations

import copy
import itertools
import sys
import types
from dataclasses import dataclass
from typing import Any

from evalkit.chat import Completion, Message
from evalkit.strategies.respond_tool import RESPOND_TOOL

MODEL = "evalkit-reference-fc"
Output = list[dict[str, Any]]
Turns = list[list[list[str]]]  # BFCL's decoded multi-turn output: turns, each of steps, each of call strings


@dataclass(frozen=True)
class _ModelConfig:
    underscore_to_dot: bool = True


def _install_stub() -> None:
    name = "bfcl_eval.constants.model_config"
    if name not in sys.modules:
        stub = types.ModuleType(name)
        stub.MODEL_CONFIG_MAPPING = {MODEL.replace("_", "/"): _ModelConfig()}  # type: ignore[attr-defined]
        sys.modules[name] = stub


_install_stub()

from bfcl_eval.constants.enums import Language  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker, standardize_string  # noqa: E402
from bfcl_eval.utils import is_empty_output  # noqa: E402

__all__ = [
    "MODEL",
    "bfcl_multi_turn_verdict",
    "bfcl_output",
    "bfcl_turns",
    "bfcl_verdict",
    "standardize_string",
]  # import BFCL's checker through here: the stub first

_names = itertools.count()


def bfcl_verdict(
    category: str,
    functions: list[dict[str, Any]],
    output: Output | None,
    ground_truth: list[dict[str, Any]] | None,
) -> bool:
    """BFCL's verdict on one decoded model output (`[{tool_name: {arg: value}}]`; None: undecodable)."""
    if "irrelevance" in category:
        return output is None or bool(is_empty_output(output))
    if category == "live_relevance":
        return output is not None and not is_empty_output(output)
    if output is None:
        return False
    language = {"simple_java": Language.JAVA, "simple_javascript": Language.JAVASCRIPT}.get(category, Language.PYTHON)
    result = ast_checker(copy.deepcopy(functions), output, ground_truth, language, category, MODEL)
    return bool(result["valid"])


def bfcl_output(completion: Completion) -> Output | None:
    """A reply as BFCL's function-calling handlers decode it: `[{name: arguments}]` per call, None when a
    call could not be decoded (arguments that did not parse, a name llama-server could not read).
    `respond` is the respond_tool guard's channel for a text reply, not a function the case offers:
    BFCL sees that reply as text, no call."""
    calls = [call for call in completion.tool_calls if call.name != RESPOND_TOOL.name]
    if any(call.malformed or call.name_lost for call in calls):
        return None
    return [{call.name: call.arguments} for call in calls if call.arguments is not None]


def bfcl_turns(messages: list[Message]) -> Turns:
    """A multi-turn transcript as BFCL's runner hands it to `multi_turn_checker`: per scenario turn (each
    starts with the scenario's user message), one step per model reply with calls, each call written
    `name(arg=value, ...)`. A reply with a call that does not decode is left out, as BFCL's runner
    skips a step it cannot decode; so is a reply without calls (BFCL: an empty step)."""
    turns: Turns = []
    for message in messages:
        if message.role == "user" and message.origin == "scenario":
            turns.append([])
        elif message.role == "assistant" and message.origin == "model" and turns:
            calls = [c for c in message.tool_calls if c.name != RESPOND_TOOL.name]
            if calls and not any(c.malformed or c.name_lost for c in calls):
                turns[-1].append([_call_text(c.name, c.arguments or {}) for c in calls])
    return turns


def _call_text(name: str, arguments: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in arguments.items())})"


def bfcl_multi_turn_verdict(case: dict[str, Any], turns: Turns, truth: list[list[str]]) -> bool:
    """BFCL's verdict on a multi-turn output. Fewer turns than the ground truth fail, as BFCL's runner
    fails a run "force-terminated during inference" before its checker sees it."""
    if len(turns) != len(truth):
        return False
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    model = f"evalkit_reference_{next(_names)}"  # BFCL caches backend instances by model name and case id
    return bool(multi_turn_checker(turns, truth, case, case["id"].rsplit("_", 1)[0], model)["valid"])
