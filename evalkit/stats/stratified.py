"""A stratified test across cells: a small drop in every cell, invisible to each cell's test, adds
up. The statistic is Cochran–Mantel–Haenszel's (Mantel & Haenszel 1959, J. Natl. Cancer Inst.
22:719–748): the baseline's passes summed over the strata k (the cells), T = Σ a_k, shown as
Z = Σ (a_k − E a_k) / √(Σ Var a_k) with E a_k = n_bk m_k / N_k and Var a_k = n_bk n_ck m_k
(N_k − m_k) / (N_k² (N_k − 1)) under the hypergeometric law given each table's margins (m_k passes of
N_k runs). A large T says the baseline passes more often than the candidate across the cells.

The p-value is exact and conditional: P(T ≥ t) given every table's margins, the convolution of the
strata's hypergeometric laws (the exact test of a common odds ratio of 1; Mehta, Patel & Gray 1985,
JASA 80:969–973), so its size is at most α whatever the rates: with no drop in any stratum, or a
candidate better in some, T is stochastically no larger. The normal approximation of Z was slightly
above α with few strata (six cells at 90%, N = 25: about 1.01 × α at α/7). The effect is the Mantel–
Haenszel common risk difference, Σ w_k d_k / Σ w_k with w_k = n_bk n_ck / N_k, with the variance
of Sato (1989, Biometrics 45:1323–1324; Greenland & Robins 1985), valid for many small strata.
See docs/gate.md, "Stratified".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = ["Stratified", "cmh", "conditional_pvalue"]


@dataclass(frozen=True)
class Stratified:
    z: float
    p: float  # one-sided, exact conditional: the candidate is lower across the strata
    difference: float  # Mantel–Haenszel candidate − baseline
    low: float
    high: float


def cmh(tables: Sequence[tuple[int, int, int, int]], confidence: float) -> Stratified | None:
    """Tables (baseline passes, baseline runs, candidate passes, candidate runs); None when no
    stratum has variance (every run of every cell passed, or failed)."""
    num = var = 0.0
    w_sum = d_num = p_num = q_num = 0.0
    for xb, nb, xc, nc in tables:
        total, passes = nb + nc, xb + xc
        # a stratum of one run has no variance given its margins: it carries no information
        if total < 2:
            continue
        num += xb - nb * passes / total
        var += nb * nc * passes * (total - passes) / (total * total * (total - 1))
        w = nb * nc / total
        w_sum += w
        d_num += (xc * nb - xb * nc) / total  # w_k (p̂_ck − p̂_bk)
        # Sato's P and Q, the candidate as the "exposed" arm (difference candidate − baseline)
        p_num += (nc * nc * xb - nb * nb * xc + nb * nc * (nb - nc) / 2) / (total * total)
        q_num += (xb * (nc - xc) + xc * (nb - xb)) / (2 * total)
    if var <= 0 or w_sum <= 0:
        return None
    z = num / math.sqrt(var)
    p = conditional_pvalue(tables)
    d = d_num / w_sum
    # Sato's estimate is not a sum of squares and can come out below 0: read as no spread
    se = math.sqrt(max(0.0, d * p_num + q_num)) / w_sum
    half = float(special.ndtri(1 - (1 - confidence) / 2)) * se
    return Stratified(z, p, d, max(-1.0, d - half), min(1.0, d + half))


def _hypergeom(xb: int, nb: int, xc: int, nc: int) -> tuple[int, np.ndarray]:
    """The baseline's passes given the margins: (the least possible, the probabilities from there)."""
    passes = xb + xc
    # the baseline's passes given the margins: at least what the candidate cannot hold, at most its runs
    low, high = max(0, passes - nc), min(nb, passes)
    a = np.arange(low, high + 1)
    logs = special.gammaln(nb + 1) - special.gammaln(a + 1) - special.gammaln(nb - a + 1)
    logs += special.gammaln(nc + 1) - special.gammaln(passes - a + 1) - special.gammaln(nc - passes + a + 1)
    logs -= special.gammaln(nb + nc + 1) - special.gammaln(passes + 1) - special.gammaln(nb + nc - passes + 1)
    return low, np.exp(logs)


def conditional_pvalue(tables: Sequence[tuple[int, int, int, int]]) -> float:
    """P(Σ a_k ≥ the observed sum) given every stratum's margins (one-sided, exact)."""
    start, law, observed = 0, np.ones(1), 0
    for xb, nb, xc, nc in tables:
        low, pmf = _hypergeom(xb, nb, xc, nc)
        keep = pmf > pmf.max() * 1e-30  # far tails, below any level a gate uses
        first, last = int(np.argmax(keep)), int(len(keep) - np.argmax(keep[::-1]))
        # the sum's law is the convolution of the strata's: they are independent given their margins
        law = np.convolve(law, pmf[first:last])
        start += low + first
        observed += xb
    # the trimmed tails and rounding leave the total a hair off 1
    law /= law.sum()
    return float(min(1.0, law[max(0, observed - start) :].sum()))
