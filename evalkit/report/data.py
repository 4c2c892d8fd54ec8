"""Report data: one pure function from `Results` to plain frozen dataclasses.

Renderers (HTML, markdown, JSON) only display what `build_report` computed; nothing here reads a
clock, the environment or anything but the results. Layout: columns are backend · model · mode ·
strategy, rows are "all scenarios", then each family followed by its scenarios. Family and overall
rows pool runs across scenarios (intervals then ignore clustering by scenario; pass^k does not).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

import numpy as np

from evalkit.report.bfcl_table import BfclScore
from evalkit.report.cells import CellStats, Tally, cell_stats
from evalkit.report.comparisons import Comparison, ComparisonKind, compare
from evalkit.report.findings import Finding, find
from evalkit.report.power_statement import PowerStatement, power_statement
from evalkit.report.provenance import Provenance, portable, provenance
from evalkit.report.restarts import PhaseExits, phase_exits
from evalkit.report.side_by_side import SideBySideLine, configured_pairs, side_by_side
from evalkit.report.terminal import configured_order
from evalkit.report.transcripts import Transcript, pick_failed, pick_passing, prepare_choices, transcript
from evalkit.results.integrity import incompleteness
from evalkit.results.records import Cell, RunRecord
from evalkit.results.runs import Results, RunRow
from evalkit.results.table import group_runs
from evalkit.stats.proportions import IntervalMethod
from evalkit.stats.rates import Rate

__all__ = ["Column", "Drilldown", "NotCounted", "ReportData", "Row", "build_report"]

OVERALL = "all scenarios"


@dataclass(frozen=True)
class Column:
    id: str
    backend: str
    model: str
    mode: str
    strategy: str
    simulated: bool

    @property
    def group(self) -> str:
        return f"{self.backend} · {self.model} · {self.mode}"

    @property
    def label(self) -> str:
        return f"{self.group} · {self.strategy}"

    @property
    def model_label(self) -> str:
        return self.model if self.model == self.backend else f"{self.backend} · {self.model}"


@dataclass(frozen=True)
class Row:
    id: str
    kind: Literal["overall", "family", "scenario"]
    family: str
    scenario: str

    @property
    def label(self) -> str:
        return self.scenario or self.family or OVERALL


@dataclass(frozen=True)
class Drilldown:
    id: str
    column: Column
    row: Row
    stats: CellStats
    prepare_choices: tuple[tuple[str, int], ...]
    failed: tuple[Transcript, ...]
    failed_total: int
    passing: Transcript | None


@dataclass(frozen=True)
class NotCounted:
    column: Column
    scenario: str
    runs: int
    infra_errors: int
    unsupported: int
    example_error: str | None


@dataclass(frozen=True)
class TableRow:
    """A row of the published-beside-measured table (`evalkit.report.published`)."""

    label: str
    published: bool  # typed in from the source, not measured here
    simulated: bool
    values: tuple[float | Rate | None, ...]  # one per family: a published rate, a measured Rate, or nothing


@dataclass(frozen=True)
class PublishedTable:
    source: str
    metric: str
    families: tuple[str, ...]
    rows: tuple[TableRow, ...]


@dataclass(frozen=True)
class ReportData:
    title: str
    generated_at: str | None  # passed in by the caller: building the data never reads a clock
    simulated: bool
    confidence: float
    interval_method: str
    alpha: float
    bootstrap_seed: int
    provenance: Provenance
    total_runs: int
    counted_runs: int
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    cells: dict[str, dict[str, CellStats]]  # row id → column id → stats; absent when no run
    findings: tuple[Finding, ...]  # per model and family: the best stack by correct, and its near rivals
    comparisons: tuple[Comparison, ...]
    power: PowerStatement | None
    not_counted: tuple[NotCounted, ...]
    drilldowns: tuple[Drilldown, ...]
    published: PublishedTable | None = None  # `report --published`: reference numbers beside measured ones
    incomplete: tuple[str, ...] = ()  # why the file is not a finished run: a banner, findings provisional
    bfcl_score: BfclScore | None = None  # results of imported BFCL cases: evalkit's and BFCL's accuracy per category
    side_by_side: tuple[SideBySideLine, ...] = ()  # the config's `side_by_side` pairs, per family
    phase_restarts: tuple[PhaseExits, ...] = ()  # server phases (guard proxies) that exited mid-run

    def cell(self, row: Row, column: Column) -> CellStats | None:
        return self.cells.get(row.id, {}).get(column.id)

    @property
    def side_by_side_first(self) -> bool:
        """Whether the side-by-side pairs are the page's question, so they open it: they set at least half
        its columns side by side (configs/forge-sim.yaml: 8 of 9; adr013.yaml, where Forge came later,
        a few of many, and its findings lead)."""
        paired = {side.column for line in self.side_by_side for side in (line.left, line.right)}
        return bool(paired) and 2 * len(paired) >= len(self.columns)

    @property
    def all_simulated(self) -> bool:
        """Every column simulated: only then may a title say SIMULATED; mixed data is marked per column."""
        return bool(self.columns) and all(c.simulated for c in self.columns)

    @property
    def infra_errors(self) -> int:
        """Runs not counted because the backend stayed broken."""
        return sum(n.infra_errors for n in self.not_counted)

    @property
    def unsupported(self) -> int:
        """Runs not counted because the backend cannot do what the cell needs."""
        return sum(n.unsupported for n in self.not_counted)

    @property
    def simulated_suffix(self) -> str:
        """What a "wrote FILE" line adds: mixed data is not called simulated results."""
        if not self.simulated:
            return ""
        return " (SIMULATED results)" if self.all_simulated else " (mixed: the SIM columns are simulated)"


ColumnKey = tuple[str, str, str, str]


def _columns(results: Results[RunRow]) -> list[Column]:
    backends, modes, strategies = configured_order(results)

    def rank(order: list[str], value: str) -> tuple[int, str]:
        return (order.index(value) if value in order else len(order), value)

    keys = {(r.cell.backend, r.cell.model, r.cell.mode, r.cell.strategy) for r in results.runs}
    ordered = sorted(keys, key=lambda k: (rank(backends, k[0]), k[1], rank(modes, k[2]), rank(strategies, k[3])))
    simulated = {(r.cell.backend, r.cell.model, r.cell.mode, r.cell.strategy) for r in results.runs if r.simulated}
    return [Column(f"c{i}", *key, simulated=key in simulated) for i, key in enumerate(ordered)]


def _rows(results: Results[RunRow]) -> list[Row]:
    families: dict[str, set[str]] = defaultdict(set)
    for run in results.runs:
        families[run.cell.family].add(run.cell.scenario)
    rows = [Row("r0", "overall", "", "")]
    for family in sorted(families):
        rows.append(Row(f"r{len(rows)}", "family", family, ""))
        rows += [Row(f"r{len(rows) + i}", "scenario", family, s) for i, s in enumerate(sorted(families[family]))]
    return rows


def _group_runs(
    results: Results[RunRow], columns: Sequence[Column], rows: Sequence[Row]
) -> dict[tuple[str, str], Sequence[RunRow]]:
    """Runs per (row id, column id), in file order: each run in its scenario's, its family's and the
    overall row's cell of its column."""
    by_column: dict[ColumnKey, str] = {(c.backend, c.model, c.mode, c.strategy): c.id for c in columns}
    row_of = {(r.family, r.scenario): r.id for r in rows if r.kind != "overall"}
    overall = rows[0].id

    def cells_of(c: Cell) -> tuple[tuple[str, str], ...]:
        column = by_column[(c.backend, c.model, c.mode, c.strategy)]
        return ((overall, column), (row_of[(c.family, "")], column), (row_of[(c.family, c.scenario)], column))

    grouped = group_runs(results.runs, cells_of)
    order = {(r.id, c.id): i for i, (c, r) in enumerate((c, r) for c in columns for r in rows)}
    return {key: grouped[key] for key in sorted(grouped, key=order.__getitem__)}


def _tallies(rows: Sequence[Row], grouped: dict[tuple[str, str], Sequence[RunRow]]) -> dict[tuple[str, str], Tally]:
    """Scenario cells tally their runs; a family's cells and the overall row's add up their scenarios'."""
    family_row = {r.family: r.id for r in rows if r.kind == "family"}
    scenario_rows = {r.id: r for r in rows if r.kind == "scenario"}
    # only scenario cells read their runs: each run is read once, however many rows it is counted in
    tallies = {key: Tally.of(runs) for key, runs in grouped.items() if key[0] in scenario_rows}
    pooled: dict[tuple[str, str], list[Tally]] = defaultdict(list)
    for (row_id, column_id), tally in tallies.items():
        pooled[(family_row[scenario_rows[row_id].family], column_id)].append(tally)
        pooled[(rows[0].id, column_id)].append(tally)
    return tallies | {key: Tally.total(parts) for key, parts in pooled.items()}


def _comparison_groups(
    columns: Sequence[Column], rows: Sequence[Row], grouped: dict[tuple[str, str], Sequence[RunRow]]
) -> dict[tuple[ComparisonKind, str, str], dict[str, Sequence[RunRow]]]:
    """Strategies side by side within a backend/model/mode, and models side by side within a
    mode/strategy, for the overall row and each family."""
    out: dict[tuple[ComparisonKind, str, str], dict[str, Sequence[RunRow]]] = defaultdict(dict)
    for row in rows:
        if row.kind == "scenario":
            continue  # per-scenario pairs would multiply the comparisons past any useful power
        for column in columns:
            runs = grouped.get((row.id, column.id))
            if runs:
                out[("strategy", column.group, row.label)][column.strategy] = runs
                out[("model", f"{column.mode} · {column.strategy}", row.label)][column.model_label] = runs
    return {key: sides for key, sides in out.items() if len(sides) > 1}


def _not_counted(
    columns: Sequence[Column], rows: Sequence[Row], grouped: dict[tuple[str, str], Sequence[RunRow]]
) -> list[NotCounted]:
    out = []
    for column in columns:
        for row in rows:
            runs = grouped.get((row.id, column.id), [])
            bad = [r for r in runs if not r.counted]
            if row.kind == "scenario" and bad:
                errors = [r.error for r in bad if r.error]
                out.append(
                    NotCounted(
                        column,
                        row.scenario,
                        len(runs),
                        sum(r.outcome == "infra_error" for r in bad),
                        sum(r.outcome == "unsupported" for r in bad),
                        errors[0] if errors else None,
                    )
                )
    return out


def _drilldown(
    ident: str,
    column: Column,
    row: Row,
    runs: Sequence[RunRow],
    whole: Sequence[RunRecord],
    stats: CellStats,
    max_failed: int,
) -> Drilldown:
    """`whole`: the records of `runs` with transcripts (all, or the sample `evalkit.results.scan` kept)."""
    passing = pick_passing(whole)
    return Drilldown(
        id=ident,
        column=column,
        row=row,
        stats=stats,
        prepare_choices=prepare_choices(runs),
        failed=tuple(transcript(r) for r in pick_failed(whole, max_failed)),
        failed_total=sum(1 for r in runs if r.counted and not r.correct),
        passing=transcript(passing) if passing else None,
    )


def results_time(results: Results[RunRow]) -> str | None:
    """When the newest segment of `results` finished: a report's stamp. Not the clock: the same files
    give the same report, byte for byte, so a committed report made again from its results is unchanged."""
    return max((footer.finished_at for footer in results.footers), default=None)


def build_report(
    results: Results[RunRow],
    *,
    title: str | None = None,
    confidence: float = 0.95,
    interval_method: IntervalMethod = "wilson",
    alpha: float = 0.05,
    seed: int = 0,
    max_failed_transcripts: int = 3,
    include_power: bool = True,
    generated_at: str | None = None,
    root: str | None = None,
) -> ReportData:
    """Everything a report shows. `seed` seeds the bootstrap; the same inputs give the same data.
    `root` is the project directory: paths under it are shown relative to it."""
    columns, rows = _columns(results), _rows(results)
    grouped = _group_runs(results, columns, rows)
    tallies = _tallies(rows, grouped)
    cells: dict[str, dict[str, CellStats]] = defaultdict(dict)
    drilldowns = []
    for (row_id, column_id), runs in grouped.items():
        ri, ci = int(row_id[1:]), int(column_id[1:])
        stats = cell_stats(
            tallies[(row_id, column_id)],
            # seeded by the cell's place: its bootstrap does not depend on the cells computed before it
            np.random.default_rng([seed, ri, ci]),
            confidence=confidence,
            method=interval_method,
        )
        cells[row_id][column_id] = stats
        if rows[ri].kind == "scenario":
            drilldowns.append(
                _drilldown(
                    f"d-{row_id}-{column_id}",
                    columns[ci],
                    rows[ri],
                    runs,
                    results.whole(runs, max_failed_transcripts),
                    stats,
                    max_failed_transcripts,
                )
            )
    per_cell = [s.counted for by_col in cells.values() for s in by_col.values()]
    names = sorted({h.config_name for h in results.headers})
    source = provenance(results, root)
    comparisons = tuple(compare(_comparison_groups(columns, rows, grouped), alpha=alpha, confidence=confidence))
    return ReportData(
        title=title or f"evalkit report: {', '.join(names)}",
        generated_at=generated_at,
        simulated=results.simulated,
        confidence=confidence,
        interval_method=interval_method,
        alpha=alpha,
        bootstrap_seed=seed,
        provenance=source,
        total_runs=len(results.runs),
        counted_runs=sum(s.counted for s in cells.get(rows[0].id, {}).values()),  # every run is in its overall cell
        incomplete=tuple(portable(why, root) for why in incompleteness(results)),
        columns=tuple(columns),
        rows=tuple(rows),
        cells=dict(cells),
        findings=find(
            [(r.id, r.family) for r in rows if r.kind == "family"],
            [(c.id, c.model_label, f"{c.mode} · {c.strategy}") for c in columns],
            grouped,
            {(r, c): s for r, by_col in cells.items() for c, s in by_col.items()},
            alpha,
            _guards(columns, source.stacks),
        ),
        comparisons=comparisons,
        power=power_statement(_typical_n(rows, cells), alpha, paired=any(c.discordant is not None for c in comparisons))
        if include_power and per_cell
        else None,
        not_counted=tuple(_not_counted(columns, rows, grouped)),
        phase_restarts=phase_exits(results.runs),
        side_by_side=side_by_side(
            configured_pairs(results),
            [(r.id, r.label) for r in rows if r.kind != "scenario"],
            {(c.backend, c.mode, c.strategy): c.id for c in columns},
            cells,
            grouped,
            confidence=confidence,
            alpha=alpha,
        ),
        drilldowns=tuple(sorted(drilldowns, key=lambda d: (int(d.column.id[1:]), int(d.row.id[1:])))),
    )


def _guards(columns: Sequence[Column], stacks: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Column id -> what its strategy runs, as the configs set it (" | " between configs that differ)."""
    texts: dict[str, list[str]] = defaultdict(list)
    for label, text in stacks:
        texts[label].append(text)
    return {c.id: " | ".join(texts[c.strategy]) for c in columns if texts.get(c.strategy)}


def _typical_n(rows: Sequence[Row], cells: dict[str, dict[str, CellStats]]) -> int:
    """The median counted runs of a scenario cell: the N a reader's per-cell comparisons have."""
    counts = [s.counted for row in rows if row.kind == "scenario" for s in cells.get(row.id, {}).values() if s.counted]
    return max(1, int(median(counts))) if counts else 1
