"""The power statement: what a comparison of two cells with N runs each can and cannot detect, for
the test the comparisons use (McNemar when runs pair, as the gate does; Boschloo otherwise)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.stats.sample_size import SampleSize, detectable_rate, n_needed

__all__ = ["DetectableLine", "NeededLine", "PowerStatement", "power_statement"]

BASELINES = (1.0, 0.95, 0.9)
DROPS = ((1.0, 0.9), (1.0, 0.8), (0.95, 0.8), (0.9, 0.7))
POWER = 0.8
# `n_needed` for DROPS at the report's default α and POWER: each is a search over exact Boschloo regions
# (about 0.3 s together, a tenth of a report's fixed cost). tests/report/test_report_data.py recomputes them.
NEEDED_AT_DEFAULTS: dict[tuple[float, float], tuple[SampleSize, ...]] = {
    (0.05, POWER): (
        SampleSize(54, 0.8015415165816413, True),
        SampleSize(27, 0.8177166537612319, True),
        SampleSize(61, 0.8070932862839967, True),
        SampleSize(50, 0.8077519374314593, True),
    ),
}


@dataclass(frozen=True)
class DetectableLine:
    baseline: float
    boschloo: float | None  # the highest candidate rate detected with 80% power (None: not even 0)
    fisher: float | None
    mcnemar: float | None  # n independent pairs (the conservative case for paired runs)

    def used(self, paired: bool) -> float | None:
        # the figure for the test the comparisons actually run
        return self.mcnemar if paired else self.boschloo


@dataclass(frozen=True)
class NeededLine:
    baseline: float
    candidate: float
    needed: SampleSize  # runs per cell, Boschloo; `exact` False when the normal approximation was used


@dataclass(frozen=True)
class PowerStatement:
    n: int
    alpha: float
    power: float
    paired: bool  # the report's comparisons pair runs (same seeds), so they use McNemar
    detectable: tuple[DetectableLine, ...]
    needed: tuple[NeededLine, ...]

    @property
    def summary(self) -> str:
        first = self.detectable[0]
        rate = first.used(self.paired)
        if rate is None:
            return (
                f"With {self.n} runs per cell, not even a drop from {first.baseline:.0%} to 0% is detected "
                f"with {self.power:.0%} power at α={self.alpha} by {self.test}."
            )
        return (
            f"With {self.n} runs per cell, a cell that always passed must fall to {rate:.0%} or "
            f"below for a one-sided {self.test} at α={self.alpha} to catch it with {self.power:.0%} "
            "power; smaller drops mostly go unseen."
        )

    @property
    def test(self) -> str:
        return "exact McNemar test on paired runs" if self.paired else "Boschloo test"


def power_statement(n: int, alpha: float = 0.05, *, paired: bool = False) -> PowerStatement:
    return PowerStatement(
        n=n,
        alpha=alpha,
        power=POWER,
        paired=paired,
        detectable=tuple(
            DetectableLine(
                b,
                detectable_rate(n, b, alpha=alpha, power=POWER),
                detectable_rate(n, b, alpha=alpha, power=POWER, test="fisher"),
                detectable_rate(n, b, alpha=alpha, power=POWER, test="mcnemar"),
            )
            for b in BASELINES
        ),
        needed=tuple(NeededLine(b, c, size) for (b, c), size in zip(DROPS, _needed(alpha), strict=True)),
    )


def _needed(alpha: float) -> tuple[SampleSize, ...]:
    # other levels are searched now: rare, and a report asked for them can afford the time
    known = NEEDED_AT_DEFAULTS.get((alpha, POWER))
    return known or tuple(n_needed(b, c, alpha=alpha, power=POWER) for b, c in DROPS)
