"""Score statistics for a difference of rates larger than a margin D: H0: p₁ − p₂ ≤ D against
H1: p₁ − p₂ > D (arm 1 the baseline: the candidate dropped by more than D), their asymptotic
p-values, and the score intervals that invert them.

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

Both are asymptotic, and above α at the margin (0.070 at α = 0.05, N = 25, 0.95 → 0.90): the gate
orders tables by these statistics but takes its p-values from their exact distribution
(`evalkit.stats.unconditional`); the asymptotic forms serve above 1,000 runs a side, where a cell
fails only when both the exact test and the score interval say so. See docs/gate.md, "Margin".
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["fm_pvalue", "fm_z", "score_interval", "tango_pvalue", "tango_z"]


def _restricted(p1: np.ndarray, n1: int, p2: np.ndarray, n2: int, d: float) -> tuple[np.ndarray, np.ndarray]:
    """FM's restricted MLE (p̃₁, p̃₂) with p̃₁ − p̃₂ = d, for arm 1 (baseline) and arm 2 (candidate)."""
    theta = n2 / n1
    # the cubic a·t³ + b·t² + c·t + e = 0 of FM's appendix, whose root in [0, 1] is p̃₁
    a = 1 + theta
    b = -(1 + theta + p1 + theta * p2 + d * (theta + 2))
    c = d * d + d * (2 * p1 + theta + 1) + p1 + theta * p2
    e = -p1 * d * (1 + d)
    # its root by the trigonometric form (three real roots; the one wanted has angle (π + arccos)/3)
    v = b**3 / (27 * a**3) - b * c / (6 * a * a) + e / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b * b / (9 * a * a) - c / (3 * a), 0.0))
    # u = 0: a triple root, where any angle gives it
    ratio = np.divide(v, u**3, out=np.zeros_like(v), where=u != 0)
    w = (np.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3
    # rounding can put a root of 0 or 1 a hair outside [0, 1], where the variance would go negative
    t1 = np.clip(2 * u * np.cos(w) - b / (3 * a), 0.0, 1.0)
    t2 = np.clip(t1 - d, 0.0, 1.0)
    return t1, t2


def _standardised(diff: np.ndarray, var: np.ndarray) -> np.ndarray:
    """diff / √var; with no variance under the null the table is the null's only outcome (0) or
    impossible under it (±∞)."""
    limit = np.where(diff > 0, np.inf, np.where(diff < 0, -np.inf, 0.0))
    out: np.ndarray = np.divide(diff, np.sqrt(var), out=limit, where=var > 0)
    return out


def fm_z(x1: np.ndarray | int, n1: int, x2: np.ndarray | int, n2: int, margin: float) -> np.ndarray:
    """FM's Z for H0: p₁ − p₂ = margin (arm 1 the baseline); large Z says p₁ − p₂ > margin."""
    p1, p2 = np.asarray(x1, dtype=float) / n1, np.asarray(x2, dtype=float) / n2
    t1, t2 = _restricted(p1, n1, p2, n2, margin)
    var = t1 * (1 - t1) / n1 + t2 * (1 - t2) / n2
    diff = p1 - p2 - margin
    return _standardised(diff, var)


def fm_pvalue(x_base: int, n_base: int, x_cand: int, n_cand: int, margin: float) -> float:
    """One-sided p of "the candidate dropped by more than `margin`" (unpaired)."""
    return float(special.ndtr(-fm_z(x_base, n_base, x_cand, n_cand, margin)))


def tango_z(lost: np.ndarray | int, gained: np.ndarray | int, n: int, margin: float) -> np.ndarray:
    """Tango's Z for H0: p_lost − p_gained = margin over n pairs; large Z says the drop exceeds it.
    A negative margin is the mirror image (the roles of lost and gained swapped), where the closed
    form's root is the wrong one."""
    if margin < 0:
        mirrored: np.ndarray = -tango_z(gained, lost, n, -margin)
        return mirrored
    b, c = np.asarray(lost, dtype=float), np.asarray(gained, dtype=float)
    d = margin
    big_b = (b + c) * (1 - d) - 2 * d * (n - b)
    # the positive root of 2n·u² − B·u − c·D(1 − D) = 0 (see the module's docstring)
    u = (big_b + np.sqrt(big_b * big_b + 8 * n * c * d * (1 - d))) / (4 * n)
    var = n * (2 * u + d - d * d)
    diff = b - c - n * d
    return _standardised(diff, var)


def tango_pvalue(lost: int, gained: int, n: int, margin: float) -> float:
    """One-sided p of "the candidate dropped by more than `margin`" (n pairs)."""
    return float(special.ndtr(-tango_z(lost, gained, n, margin)))


def score_interval(paired: bool, x1: int, n1: int, x2: int, n2: int, alpha: float) -> tuple[float, float]:
    """The 1 − 2α score interval of p₁ − p₂ (unpaired: Farrington–Manning's statistic, the
    Miettinen–Nurminen interval without its N/(N − 1); paired, n1 pairs of which x1 won by side 1
    and x2 by side 2: Tango's interval): the margins δ whose one-sided score test in either direction
    does not reject at α. The statistic falls as δ rises, so each end is a bisection over δ."""
    critical = -float(special.ndtri(alpha))

    def z(delta: float) -> float:
        return float(tango_z(x1, x2, n1, delta) if paired else fm_z(x1, n1, x2, n2, delta))

    def root(target: float) -> float:
        low, high = -1.0, 1.0  # z(low) ≥ target > z(high), at the limits by convention
        # 60 halvings of a width of 2 reach 2⁻⁵⁹, below a double's resolution near the margins used
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if z(mid) >= target else (low, mid)
        return low

    return root(critical), root(-critical)
