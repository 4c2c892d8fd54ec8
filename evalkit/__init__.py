"""evalkit: measure tool-calling reliability of LLM agents and the guards around them.

The public API: load scenarios and configs, run a config, read results. Statistics, reports and
the regression gate live in `evalkit.stats`, `evalkit.report` and `evalkit.gate`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names load on first use (PEP 562), so that `import evalkit` (and with it every
# `evalkit` command, even `--help`) does not pay for pydantic models, httpx and the runner up front.
_LAZY = {
    "RunConfig": "evalkit.config",
    "load_config": "evalkit.config",
    "EvalkitError": "evalkit.errors",
    "Results": "evalkit.results",
    "RunRecord": "evalkit.results",
    "load_results": "evalkit.results",
    "arun_config": "evalkit.runner",
    "run_config": "evalkit.runner",
    "Scenario": "evalkit.scenario",
    "load_scenario": "evalkit.scenario",
    "load_scenarios": "evalkit.scenario",
}

if TYPE_CHECKING:
    from evalkit.config import RunConfig, load_config
    from evalkit.errors import EvalkitError
    from evalkit.results import Results, RunRecord, load_results
    from evalkit.runner import arun_config, run_config
    from evalkit.scenario import Scenario, load_scenario, load_scenarios


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


__all__ = [
    "EvalkitError",
    "Results",
    "RunConfig",
    "RunRecord",
    "Scenario",
    "__version__",
    "arun_config",
    "load_config",
    "load_results",
    "load_scenario",
    "load_scenarios",
    "run_config",
]
