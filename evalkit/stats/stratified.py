"""A stratified test across cells: a small drop in every cell, invisible to each cell's test, adds
up. The Cochran–Mantel–Haenszel test (Mantel & Haenszel 1959, J. Natl. Cancer Inst. 22:719–748),
one-sided: Z = Σ (a_k − E a_k) / √(Σ Var a_k) over the strata k (the cells), with a_k the
baseline's passes, E a_k = n_bk m_k / N_k and Var a_k = n_bk n_ck m_k (N_k − m_k) / (N_k² (N_k − 1))
under the hypergeometric law given each table's margins (m_k passes of N_k runs). A large Z says
the baseline passes more often than the candidate across the cells. The effect is the Mantel–
Haenszel common risk difference, Σ w_k d_k / Σ w_k with w_k = n_bk n_ck / N_k, with the variance
of Sato (1989, Biometrics 45:1323–1324; Greenland & Robins 1985), valid for many small strata.
See docs/gate.md, "Stratified".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import special

__all__ = ["Stratified", "cmh"]


@dataclass(frozen=True)
class Stratified:
    z: float
    p: float  # one-sided: the candidate is lower across the strata
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
    d = d_num / w_sum
    se = math.sqrt(max(0.0, d * p_num + q_num)) / w_sum
    half = float(special.ndtri(1 - (1 - confidence) / 2)) * se
    return Stratified(z, float(special.ndtr(-z)), d, max(-1.0, d - half), min(1.0, d + half))
