"""The interval a cell prints, its verdict and "shown within the margin" never contradict each other,
in either mode: over random tables (paired and unpaired runs, margins of 0 to 20 points, Holm
families of one to four cells; the runs a short cell needs are computed too, which bounds the
margins drawn to those a few hundred runs can show), a cell that regressed prints an interval wholly beyond the margin,
and a cell shown within it prints an interval whose lower end is above −margin and did not regress.
Observation 4 of issue 29 was the first: 10 of 10 discordant pairs lost, failed "by more than the
margin of 5", printed [−18, −2]."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.gate.comparison import compare
from evalkit.gate.config import GateConfig
from evalkit.results.records import RunRecord
from tests.report import records


def _side(outcomes: list[bool], scenario: str, seed: int | None) -> list[RunRecord]:
    return [records.run(index=i, completed=o, scenario=scenario, seed=seed) for i, o in enumerate(outcomes)]


@st.composite
def cell(draw: st.DrawFn, n: int, paired: bool, scenario: str) -> tuple[list[RunRecord], list[RunRecord]]:
    """n runs a side. Paired: each pair lost, gained or tied; unpaired: passes drawn per side."""
    if paired:
        kinds = draw(st.lists(st.sampled_from(["lost", "gained", "both", "neither"]), min_size=n, max_size=n))
        base = [k in ("lost", "both") for k in kinds]
        cand = [k in ("gained", "both") for k in kinds]
        return _side(base, scenario, None), _side(cand, scenario, None)
    xb, xc = draw(st.integers(0, n)), draw(st.integers(0, n))
    return _side([i < xb for i in range(n)], scenario, None), _side([i < xc for i in range(n)], scenario, 7)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    paired=st.booleans(),
    n=st.integers(3, 40),
    cells=st.integers(1, 4),
    margin=st.sampled_from([0.0, 0.05, 0.1, 0.2]),
    alpha=st.sampled_from([0.05, 0.1]),
)
def test_interval_verdict_and_within_never_contradict(
    data: st.DataObject, paired: bool, n: int, cells: int, margin: float, alpha: float
) -> None:
    sides = [data.draw(cell(n, paired, f"s{i}")) for i in range(cells)]
    base = [r for b, _ in sides for r in b]
    cand = [r for _, c in sides for r in c]
    result = compare(
        records.results(base, runs_per_cell=n),
        records.results(cand, runs_per_cell=n),
        GateConfig(margin=margin, alpha=alpha),
    )
    for v in result.cells:
        d = v.difference
        assert v.counts.paired == paired
        assert -1.0 <= d.low <= d.high <= 1.0
        if v.dropped:  # regressed: every value of the interval is beyond the margin
            assert d.high <= -margin + 1e-12, (v.test, v.p, v.p_holm, d)
        if v.within_margin:  # shown within: the interval's lower end clears −margin, and it did not regress
            assert margin > 0 and d.low >= -margin - 1e-12 and not v.failed, (v.test, d)
        if margin > 0 and not v.failed and not v.within_margin:
            assert d.low < -margin + 1e-12  # not enough evidence: the interval reaches beyond −margin
