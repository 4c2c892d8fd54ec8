"""Statistics: intervals, tests, power and sample sizes (`intervals`), the exact two-sample
machinery (`exact`) and the sequential gate's stopping rule (`stopping_rule`, imported on its own:
it needs scipy.stats, which a report does not). Nothing here reads a results file."""

from __future__ import annotations

from evalkit.stats import exact
from evalkit.stats.exact import BOSCHLOO_MAX_TABLES, boschloo_pvalues, unpaired_pvalues
from evalkit.stats.intervals import (
    Difference,
    Interval,
    SampleSize,
    SprtResult,
    approx_n,
    bootstrap_mean,
    boschloo,
    clopper_pearson,
    detectable_rate,
    fisher,
    floor_pvalue,
    holm,
    mcnemar,
    mcnemar_power,
    n_needed,
    newcombe,
    pass_hat_k,
    proportion_interval,
    sprt,
    sprt_bounds,
    two_sample_power,
    wilson,
)

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
