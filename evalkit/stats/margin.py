"""Tests of a drop larger than a margin D: one-sided score tests of H0: p_base − p_cand ≤ D against
H1: p_base − p_cand > D (the candidate regressed by more than D).

Unpaired: the Farrington–Manning score test (Farrington & Manning 1990, "Test statistics and sample
size formulae for comparative binomial trials with null hypothesis of non-zero risk difference or
non-unity relative risk", Stat. Med. 9:1447–1454; Miettinen & Nurminen 1985, Stat. Med. 4:213–226,
differ by a factor N/(N − 1) on the variance). The variance is taken at the maximum-likelihood rates
restricted to p_base − p_cand = D, which have a closed form (the root of a cubic, FM's appendix).

Paired: Tango's score test for the difference of two paired proportions (Tango 1998, "Equivalence
test and confidence interval for the difference in proportions for the paired-sample design", Stat.
Med. 17:891–908; Nam 1997, Biometrics 53:1422–1430, the same statistic). Of n pairs, b were lost
(baseline passed, candidate failed) and c gained; the restricted estimate of the "gained" cell
probability under p_lost − p_gained = D is the positive root of 2n·u² − B·u − c·D(1 − D) = 0 with
B = (b + c)(1 − D) − 2D(n − b), and Z = (b − c − nD) / √(n(2u + D − D²)).

Both are asymptotic; their size at small N is printed by `benchmarks/gate_calibration.py`, and
their power here is exact (a sum over every outcome), so a power statement does not lean on the
normal approximation the p-value uses. See docs/gate.md, "Margin".
"""

from __future__ import annotations

import numpy as np
from scipy import special

from evalkit.stats.exact import binom_pmf

__all__ = ["fm_power", "fm_pvalue", "fm_z", "tango_power", "tango_pvalue", "tango_z"]


def _restricted(p1: np.ndarray, n1: int, p2: np.ndarray, n2: int, d: float) -> tuple[np.ndarray, np.ndarray]:
    """FM's restricted MLE (p̃₁, p̃₂) with p̃₁ − p̃₂ = d, for arm 1 (baseline) and arm 2 (candidate)."""
    theta = n2 / n1
    a = 1 + theta
    b = -(1 + theta + p1 + theta * p2 + d * (theta + 2))
    c = d * d + d * (2 * p1 + theta + 1) + p1 + theta * p2
    e = -p1 * d * (1 + d)
    v = b**3 / (27 * a**3) - b * c / (6 * a * a) + e / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b * b / (9 * a * a) - c / (3 * a), 0.0))
    ratio = np.divide(v, u**3, out=np.zeros_like(v), where=u != 0)
    w = (np.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3
    t1 = np.clip(2 * u * np.cos(w) - b / (3 * a), 0.0, 1.0)
    t2 = np.clip(t1 - d, 0.0, 1.0)
    return t1, t2


def fm_z(x1: np.ndarray | int, n1: int, x2: np.ndarray | int, n2: int, margin: float) -> np.ndarray:
    """FM's Z for H0: p₁ − p₂ = margin (arm 1 the baseline); large Z says p₁ − p₂ > margin."""
    p1, p2 = np.asarray(x1, dtype=float) / n1, np.asarray(x2, dtype=float) / n2
    t1, t2 = _restricted(p1, n1, p2, n2, margin)
    var = t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2
    diff = p1 - p2 - margin
    out: np.ndarray = np.divide(diff, np.sqrt(var), out=np.where(diff > 0, np.inf, -np.inf), where=var > 0)
    return out


def fm_pvalue(x_base: int, n_base: int, x_cand: int, n_cand: int, margin: float) -> float:
    """One-sided p of "the candidate dropped by more than `margin`" (unpaired)."""
    return float(special.ndtr(-fm_z(x_base, n_base, x_cand, n_cand, margin)))


def fm_power(n_base: int, n_cand: int, p_base: float, p_cand: float, margin: float, alpha: float) -> float:
    """Exact power at level α: P(FM's p ≤ α) summed over every table."""
    x1, x2 = np.arange(n_base + 1)[:, None], np.arange(n_cand + 1)[None, :]
    region = (special.ndtr(-fm_z(x1, n_base, x2, n_cand, margin)) <= alpha).astype(float)
    power = binom_pmf(np.arange(n_base + 1), n_base, p_base) @ region @ binom_pmf(np.arange(n_cand + 1), n_cand, p_cand)
    return float(power)


def tango_z(lost: np.ndarray | int, gained: np.ndarray | int, n: int, margin: float) -> np.ndarray:
    """Tango's Z for H0: p_lost − p_gained = margin over n pairs; large Z says the drop exceeds it."""
    b, c = np.asarray(lost, dtype=float), np.asarray(gained, dtype=float)
    d = margin
    big_b = (b + c) * (1 - d) - 2 * d * (n - b)
    u = (big_b + np.sqrt(big_b * big_b + 8 * n * c * d * (1 - d))) / (4 * n)
    var = n * (2 * u + d - d * d)
    diff = b - c - n * d
    out: np.ndarray = np.divide(diff, np.sqrt(var), out=np.where(diff > 0, np.inf, -np.inf), where=var > 0)
    return out


def tango_pvalue(lost: int, gained: int, n: int, margin: float) -> float:
    """One-sided p of "the candidate dropped by more than `margin`" (n pairs)."""
    return float(special.ndtr(-tango_z(lost, gained, n, margin)))


def tango_power(n: int, p_base: float, p_cand: float, margin: float, alpha: float) -> float:
    """Exact power over n pairs whose two outcomes are independent (as `mcnemar_power`): the
    discordant counts are multinomial with P(lost) = p_base(1 − p_cand), P(gained) = (1 − p_base)p_cand."""
    q_lost, q_gain = p_base * (1 - p_cand), (1 - p_base) * p_cand
    b, c = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    ok = b + c <= n
    rest = np.where(ok, n - b - c, 0)
    log_p = (
        special.gammaln(n + 1)
        - special.gammaln(b + 1)
        - special.gammaln(c + 1)
        - special.gammaln(rest + 1)
        + special.xlogy(b, q_lost)
        + special.xlogy(c, q_gain)
        + special.xlogy(rest, 1 - q_lost - q_gain)
    )
    reject = special.ndtr(-tango_z(b, c, n, margin)) <= alpha
    return float(np.where(ok & reject, np.exp(log_p), 0.0).sum())
