"""BFCL's own checker, called directly: the reference evalkit's `bfcl` matching mode is held against.

Importing `ast_checker` pulls in `bfcl_eval.constants.model_config`, which imports ~60 API handlers
(and torch). The checker only reads `MODEL_CONFIG_MAPPING[name].underscore_to_dot`, so a stub module
stands in for it: one function-calling model whose tool names have dots replaced by underscores, as
BFCL does for OpenAI-style models (and as `evalkit import bfcl` names the tools).
"""

from __future__ import annotations

import copy
import sys
import types
from dataclasses import dataclass
from typing import Any

MODEL = "evalkit-reference-fc"


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

__all__ = ["MODEL", "bfcl_verdict", "standardize_string"]  # import BFCL's checker through here: the stub first


def bfcl_verdict(
    category: str,
    functions: list[dict[str, Any]],
    output: list[dict[str, Any]] | None,
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
