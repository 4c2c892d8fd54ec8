"""evalkit: measure tool-calling reliability of LLM agents and the guards around them.

The public API: load scenarios and configs, run a config, read results. Statistics, reports and
the regression gate live in `evalkit.stats`, `evalkit.report` and `evalkit.gate`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from evalkit.config import RunConfig, load_config
from evalkit.errors import EvalkitError
from evalkit.results import Results, RunRecord, load_results
from evalkit.runner import arun_config, run_config
from evalkit.scenario import Scenario, load_scenario, load_scenarios

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
