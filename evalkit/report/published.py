"""Published numbers beside measured ones: `evalkit report --published FILE.yaml`.

Reproducing a published table (Forge's ADR-013) is one of evalkit's uses, so a report can show the
table it reproduces. The published numbers are reference data a user typed in, not measurements:
the file names its source, every published row is marked as such, and the measured rows beside it
are the report's own pooled family cells (same metric, with their intervals) for each column whose
guard stack a published row names.

    source: Forge ADR-013, "Text Response Intent" (Ministral 8B reasoning Q4_K_M, N = 25)
    metric: completed
    n: 25        # runs behind each published rate (a row may give its own `n`): intervals come from it
    families: [sequential_reasoning, relevance_detection, data_gap_recovery]
    rows:
      - {label: "Ministral 8B, ADR-013", strategy: trust_text, rates: {sequential_reasoning: 0.04}}

A row's `backends` narrows its measured columns to those entries: a guard proxy's entry runs
`trust_text` on evalkit's side, and its columns belong under the proxy's row, not under "trust text".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from evalkit._model import StrictModel
from evalkit._yaml import read_yaml
from evalkit.errors import ConfigError
from evalkit.report.data import PublishedTable, ReportData, TableRow
from evalkit.stats.rates import Rate
from evalkit.stats.rates import rate as wilson_rate

__all__ = ["Published", "PublishedRow", "load_published", "published_table", "with_published"]


class PublishedRow(StrictModel):
    label: str = Field(min_length=1)
    strategy: str | None = None  # the guard stack it corresponds to: its measured columns are shown beside it
    # only the measured columns of these backend entries (a guard proxy's `trust_text` column is not
    # "trust text"); by default every backend's
    backends: list[str] | None = Field(None, min_length=1)
    rates: dict[str, float | None] = Field(default_factory=dict)  # family -> rate in [0, 1]; None: not measured
    n: int | None = Field(default=None, ge=1)  # runs behind each rate, where it differs from the file's `n`

    @model_validator(mode="after")
    def _rates_are_proportions(self) -> PublishedRow:
        for family, rate in self.rates.items():
            if rate is not None and not 0.0 <= rate <= 1.0:
                raise ValueError(f"rates.{family}: {rate} is not a rate between 0 and 1")
        return self


class Published(StrictModel):
    source: str = Field(min_length=1)
    metric: Literal["completed", "correct"] = "completed"
    families: list[str] = Field(min_length=1)
    rows: list[PublishedRow] = Field(min_length=1)
    n: int | None = Field(default=None, ge=1)  # runs behind each published rate: its interval comes from it

    @model_validator(mode="after")
    def _rates_name_listed_families(self) -> Published:
        for i, row in enumerate(self.rows):
            unknown = sorted(set(row.rates) - set(self.families))
            if unknown:
                raise ValueError(f"rows.{i}.rates: {', '.join(unknown)} not in families")
            n = row.n or self.n
            # with N given a rate must be a count of it: a typo like 0.43 of 25 would become a made-up x
            for family, value in row.rates.items():
                if n is not None and value is not None and abs(value * n - round(value * n)) > 1e-6:
                    raise ValueError(f"rows.{i}.rates.{family}: {value} is not a count of N = {n}")
        return self

    def value(self, row: PublishedRow, family: str, confidence: float = 0.95) -> float | Rate | None:
        """A published rate, as a Wilson-interval `Rate` of its N where the file gives one."""
        value, n = row.rates.get(family), row.n or self.n
        # without an N there is no interval to give: the bare number, as published
        if value is None or n is None:
            return value
        return wilson_rate(round(value * n), n, confidence)


def load_published(path: str | Path) -> Published:
    doc = read_yaml(path)
    try:
        return Published.model_validate(doc.data or {})
    except ValidationError as exc:
        raise ConfigError(doc.invalid(exc)) from exc


def published_table(published: Published, data: ReportData) -> PublishedTable:
    """Each published row, followed by the measured columns of the guard stack it names."""
    families = tuple(published.families)
    family_rows = {row.family: row for row in data.rows if row.kind == "family"}
    rows: list[TableRow] = []
    shown: set[str] = set()  # a column is shown once, under the first published row that names it
    for entry in published.rows:
        typed_in = tuple(published.value(entry, f, data.confidence) for f in families)
        rows.append(TableRow(entry.label, True, False, typed_in))
        if entry.strategy is None:
            continue
        for column in data.columns:
            if column.strategy != entry.strategy or column.id in shown:
                continue
            # a guard proxy's own `trust_text` column is not the published "trust text" row's
            if entry.backends is not None and column.backend not in entry.backends:
                continue
            shown.add(column.id)
            values: list[float | Rate | None] = []
            for family in families:
                # a family the results do not hold shows as not measured, not as 0
                stats = data.cell(family_rows[family], column) if family in family_rows else None
                values.append(getattr(stats, published.metric) if stats is not None else None)
            rows.append(TableRow(f"measured: {column.label}", False, column.simulated, tuple(values)))
    return PublishedTable(published.source, published.metric, families, tuple(rows))


def with_published(data: ReportData, path: str | Path) -> ReportData:
    """`data` with the published table of the file at `path`."""
    return replace(data, published=published_table(load_published(path), data))
