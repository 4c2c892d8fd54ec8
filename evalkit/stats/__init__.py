"""Statistics: intervals for one proportion and a difference (`proportions`), rates (`rates`),
tests' p-values and Holm (`pvalues`), power and sample sizes (`sample_size`), averages over runs
(`averages`), Wald's SPRT (`wald`), the exact two-sample machinery (`exact`) and the sequential gate's
stopping rule (`stopping_rule`, imported on its own: it needs scipy.stats, which a report does not).
Nothing here reads a results file."""

from __future__ import annotations

from evalkit.stats import exact
from evalkit.stats.averages import bootstrap_mean, pass_hat_k
from evalkit.stats.exact import BOSCHLOO_MAX_TABLES, boschloo_pvalues, unpaired_pvalues
from evalkit.stats.proportions import Difference, Interval, clopper_pearson, newcombe, proportion_interval, wilson
from evalkit.stats.pvalues import boschloo, fisher, floor_pvalue, holm, mcnemar
from evalkit.stats.sample_size import SampleSize, approx_n, detectable_rate, mcnemar_power, n_needed, two_sample_power
from evalkit.stats.wald import SprtResult, sprt, sprt_bounds

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
