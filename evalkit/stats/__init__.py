"""Statistics: intervals for one proportion and a difference (`proportions`), rates (`rates`),
tests' p-values and Holm (`pvalues`), power and sample sizes (`sample_size`), averages over runs
(`averages`), Wald's SPRT (`wald`), the exact two-sample machinery (`exact`), the gate's tests
(`gate_tests`) and the statistics users choose among (`registry`), and the sequential gate's stopping
rule (`stopping_rule`, imported on its own: it needs scipy.stats, which a report does not). Nothing
here reads a results file."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names' types, for a type checker
    from evalkit.stats import exact
    from evalkit.stats.averages import bootstrap_mean, pass_hat_k
    from evalkit.stats.exact import BOSCHLOO_MAX_TABLES, boschloo_pvalues, unpaired_pvalues
    from evalkit.stats.proportions import Difference, Interval, clopper_pearson, newcombe, proportion_interval, wilson
    from evalkit.stats.pvalues import boschloo, fisher, floor_pvalue, holm, mcnemar
    from evalkit.stats.sample_size import (
        SampleSize,
        approx_n,
        detectable_rate,
        mcnemar_power,
        n_needed,
        two_sample_power,
    )
    from evalkit.stats.wald import SprtResult, sprt, sprt_bounds

# where each name below lives: imported when first read, so that `evalkit.stats.registry` (the gate's
# choices, which the command line shows) is read without numpy and scipy
_HOMES = {
    "exact": "evalkit.stats",
    **dict.fromkeys(("bootstrap_mean", "pass_hat_k"), "evalkit.stats.averages"),
    **dict.fromkeys(("BOSCHLOO_MAX_TABLES", "boschloo_pvalues", "unpaired_pvalues"), "evalkit.stats.exact"),
    **dict.fromkeys(
        ("Difference", "Interval", "clopper_pearson", "newcombe", "proportion_interval", "wilson"),
        "evalkit.stats.proportions",
    ),
    **dict.fromkeys(("boschloo", "fisher", "floor_pvalue", "holm", "mcnemar"), "evalkit.stats.pvalues"),
    **dict.fromkeys(
        ("SampleSize", "approx_n", "detectable_rate", "mcnemar_power", "n_needed", "two_sample_power"),
        "evalkit.stats.sample_size",
    ),
    **dict.fromkeys(("SprtResult", "sprt", "sprt_bounds"), "evalkit.stats.wald"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'evalkit.stats' has no attribute {name!r}")
    if home == __name__:
        return importlib.import_module(f"{__name__}.{name}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "BOSCHLOO_MAX_TABLES",
    "Difference",
    "Interval",
    "SampleSize",
    "SprtResult",
    "approx_n",
    "bootstrap_mean",
    "boschloo",
    "boschloo_pvalues",
    "clopper_pearson",
    "detectable_rate",
    "exact",
    "fisher",
    "floor_pvalue",
    "holm",
    "mcnemar",
    "mcnemar_power",
    "n_needed",
    "newcombe",
    "pass_hat_k",
    "proportion_interval",
    "sprt",
    "sprt_bounds",
    "two_sample_power",
    "unpaired_pvalues",
    "wilson",
]
