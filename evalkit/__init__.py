"""evalkit: measure tool-calling reliability of LLM agents and the guards around them.

The public API: load scenarios and configs, run a config, read results. Statistics, reports and
the regression gate live in `evalkit.stats`, `evalkit.report` and `evalkit.gate`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalkit._version import __version__

# The public names load on first use (PEP 562), so that `import evalkit` (and with it every
# `evalkit` command, even `--help`) does not pay for pydantic models, httpx and the runner up front.
_LAZY = {
    "RunConfig": "evalkit.run.config",
    "load_config": "evalkit.run.config",
    "EvalkitError": "evalkit.errors",
    "Results": "evalkit.results.runs",
    "RunRecord": "evalkit.results.records",
    "load_results": "evalkit.results.reader",
    "RunOptions": "evalkit.run.runner",
    "arun_config": "evalkit.run.runner",
    "run_config": "evalkit.run.runner",
    "Scenario": "evalkit.scenario.model",
    "load_scenario": "evalkit.scenario.model",
    "load_scenarios": "evalkit.scenario.model",
}

if TYPE_CHECKING:
    from evalkit.errors import EvalkitError
    from evalkit.results.reader import load_results
    from evalkit.results.records import RunRecord
    from evalkit.results.runs import Results
    from evalkit.run.config import RunConfig, load_config
    from evalkit.run.runner import RunOptions, arun_config, run_config
    from evalkit.scenario.model import Scenario, load_scenario, load_scenarios


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
    "RunOptions",
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
