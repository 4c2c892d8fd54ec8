"""Which stateful mock classes (`state: [{class: "module:Class"}]`) a scenario may name.

Building a stateful mock imports its module and calls the class: that runs code. A scenario file is
data (it may come from an import, a pull request, a download), so it cannot choose that code alone.
A class is usable if it is one of BFCL's multi-turn backends, by its exact path, or if its module was
named by the user: in the run config (`allow_state_modules`) or on the command line
(`--allow-state-module NAME`). Naming a package allows its submodules. Everything else is refused
when the scenario is loaded, before any import, with the file, the field and the line.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BFCL_STATE_CLASSES", "StateAllowlist"]

_BFCL = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
# BFCL's CLASS_FILE_PATH_MAPPING (bfcl-eval 2026.3.23), written out so that checking a name imports
# nothing; tests/scenario/test_state_allowlist.py compares it with the installed package
BFCL_STATE_CLASSES: frozenset[str] = frozenset(
    f"{_BFCL}.{module}:{cls}"
    for module, cls in (
        ("gorilla_file_system", "GorillaFileSystem"),
        ("math_api", "MathAPI"),
        ("message_api", "MessageAPI"),
        ("posting_api", "TwitterAPI"),
        ("ticket_api", "TicketAPI"),
        ("trading_bot", "TradingBot"),
        ("travel_booking", "TravelAPI"),
        ("vehicle_control", "VehicleControlAPI"),
        ("web_search", "WebSearchAPI"),
        ("memory_kv", "MemoryAPI_kv"),
        ("memory_vector", "MemoryAPI_vector"),
        ("memory_rec_sum", "MemoryAPI_rec_sum"),
    )
)


class StateAllowlist:
    """BFCL's classes plus the modules (and their submodules) a user named."""

    def __init__(self, modules: Iterable[str] = ()) -> None:
        self.modules = frozenset(m.strip() for m in modules if m.strip())

    def allows(self, target: str) -> bool:
        if target in BFCL_STATE_CLASSES:
            return True
        module = target.partition(":")[0]
        return any(module == m or module.startswith(m + ".") for m in self.modules)

    def refusal(self, target: str) -> str:
        """Why `target` is refused, with the opt-in that would allow it."""
        module = target.partition(":")[0]
        return (
            f"{target!r} is not an allowed state class: building it would run code from module {module!r}; "
            f"if you trust that module, name it with --allow-state-module {module} "
            "(or allow_state_modules in the run config)"
        )
