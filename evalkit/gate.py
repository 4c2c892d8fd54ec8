"""The CI regression gate: does a candidate's results file fall short of a baseline's?

Cells match on backend label, tool mode and strategy, with the scenarios pooled (`level: cell`,
the default), or also on the scenario (`level: scenario`). Pooling is the default because of
power: Holm's correction over the 170 scenario cells of the default matrix asks a 25-run cell for
p ≤ 0.05/170, which only a collapse reaches, while a strategy column of 425 runs shows a broad
5-point drop. Pooling stays valid under "no change" because both sides run the same scenarios the
same number of times. `level: scenario` finds one broken scenario that pooling dilutes. The model
is not part of the match unless `match_model` is set, so a new quantisation under the same backend
label can be gated; a model change is printed as a note.

A cell fails when
- its completion rate dropped significantly: a one-sided exact test (McNemar on pairs when every
  counted run pairs up by scenario, run index and seed; otherwise Boschloo, or Fisher), with Holm's
  correction across all compared cells at level α; or
- the candidate's lower 95% Wilson bound is under an absolute floor (`floor`, or per-cell `floors`;
  at level cell the floor applies to the pooled rate, and the strictest matching rule wins).
Unusable input raises `GateInputError` (exit 2): cells on one side only, empty cells, a cell
unsupported on one side only, or more infra errors than `max_infra_error_rate` allows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree as ET

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalkit.errors import GateInputError
from evalkit.report.cells import Rate, rate
from evalkit.report.comparisons import paired_outcomes
from evalkit.results import Results, RunRecord
from evalkit.stats import Difference, boschloo, fisher, holm, mcnemar, newcombe
from evalkit.yamlfile import read_yaml

__all__ = ["CellVerdict", "FloorRule", "GateConfig", "GateResult", "SequentialSettings", "compare",
           "load_gate_config", "render_junit", "render_markdown", "render_text"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FloorRule(_Model):
    """A floor for the cells whose fields match these globs (the first matching rule wins)."""

    floor: float = Field(ge=0, le=1)
    backend: str = "*"
    model: str = "*"
    mode: str = "*"
    strategy: str = "*"
    family: str = "*"
    scenario: str = "*"


class SequentialSettings(_Model):
    """Wald SPRT per cell: H₀ p = p0 against H₁ p = p1 < p0 (defaults from the notes' example)."""

    p0: float = Field(0.95, gt=0, le=1)
    p1: float = Field(0.80, ge=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    beta: float = Field(0.20, gt=0, lt=1)
    batch: int = Field(5, ge=1)
    max_runs: int = Field(50, ge=1)

    @model_validator(mode="after")
    def _p1_below_p0(self) -> SequentialSettings:
        if self.p1 >= self.p0:
            raise ValueError(f"p1 ({self.p1}) must be below p0 ({self.p0}): p1 is the regressed rate")
        return self


class GateConfig(_Model):
    alpha: float = Field(0.05, gt=0, lt=1)
    floor: float | None = Field(None, ge=0, le=1)
    floors: list[FloorRule] = Field(default_factory=list)
    max_infra_error_rate: float = Field(0.1, ge=0, le=1)
    test: Literal["boschloo", "fisher"] = "boschloo"
    pairing: Literal["auto", "paired", "unpaired"] = "auto"
    level: Literal["cell", "scenario"] = "cell"
    match_model: bool = False
    sequential: SequentialSettings = Field(default_factory=SequentialSettings)

    def floor_for(self, run: RunRecord) -> float | None:
        c = run.cell
        for rule in self.floors:
            fields = ((rule.backend, c.backend), (rule.model, c.model), (rule.mode, c.mode),
                      (rule.strategy, c.strategy), (rule.family, c.family), (rule.scenario, c.scenario))
            if all(fnmatchcase(value, pattern) for pattern, value in fields):
                return rule.floor
        return self.floor


def load_gate_config(path: str | Path) -> GateConfig:
    doc = read_yaml(path)  # a ScenarioError here names the file and line, and exits 2 like ours
    try:
        return GateConfig.model_validate(doc.data or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        line = doc.line_of(loc)
        where = f"{path}:{line}" if line else str(path)
        raise GateInputError(f"{where}: {'.'.join(map(str, loc))}: {first['msg']}") from exc


Key = tuple[str, ...]


@dataclass(frozen=True)
class CellVerdict:
    name: str  # backend/mode/strategy[/scenario]
    models: tuple[str, str]  # baseline, candidate
    baseline: Rate
    candidate: Rate
    difference: Difference  # candidate − baseline, Newcombe interval
    test: str
    p: float
    p_holm: float
    floor: float | None
    reasons: tuple[str, ...]  # empty when the cell passes
    worst: tuple[str, ...] = ()  # at level cell: the scenarios that lost the most runs

    @property
    def failed(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class GateResult:
    cells: tuple[CellVerdict, ...]
    skipped: tuple[str, ...]  # unsupported on both sides
    notes: tuple[str, ...]
    alpha: float
    level: str
    simulated: bool

    @property
    def failed(self) -> tuple[CellVerdict, ...]:
        return tuple(c for c in self.cells if c.failed)

    @property
    def passed(self) -> bool:
        return not self.failed


def _key(run: RunRecord, config: GateConfig) -> Key:
    c = run.cell
    key = (c.backend, c.mode, c.strategy) + ((c.scenario,) if config.level == "scenario" else ())
    return key + ((c.model,) if config.match_model else ())


def _name(key: Key, config: GateConfig) -> str:
    return "/".join(key[:-1] if config.match_model else key)


def _group(results: Results, config: GateConfig) -> dict[Key, list[RunRecord]]:
    groups: dict[Key, list[RunRecord]] = defaultdict(list)
    for run in results.runs:
        groups[_key(run, config)].append(run)
    return groups


def _mismatch(side: str, keys: Sequence[Key], config: GateConfig) -> str:
    shown = ", ".join(_name(k, config) for k in keys[:5])
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    return f"{len(keys)} cell(s) only in the {side}: {shown}{more}"


def _check_keys(base: dict[Key, list[RunRecord]], cand: dict[Key, list[RunRecord]], config: GateConfig) -> None:
    if not base or not cand:
        raise GateInputError(f"the {'baseline' if not base else 'candidate'} has no runs")
    only_base = sorted(set(base) - set(cand))
    only_cand = sorted(set(cand) - set(base))
    problems = [_mismatch(side, keys, config) for side, keys in (("baseline", only_base), ("candidate", only_cand))
                if keys]
    if problems:
        raise GateInputError("baseline and candidate do not cover the same cells (same backend labels, modes, "
                             "strategies and scenarios): " + "; ".join(problems))


def _same_scenarios(name: str, base: list[RunRecord], cand: list[RunRecord]) -> None:
    """At level cell the scenarios are pooled: both sides must have run the same ones."""
    b, c = {r.cell.scenario for r in base}, {r.cell.scenario for r in cand}
    if b != c:
        parts = [f"only in the {side}: {', '.join(sorted(names)[:5])}" + (" ..." if len(names) > 5 else "")
                 for side, names in (("baseline", b - c), ("candidate", c - b)) if names]
        raise GateInputError(f"{name}: baseline and candidate ran different scenarios ({'; '.join(parts)}); "
                             "pooled rates over different scenarios cannot be compared")


def _usable(name: str, side: str, runs: list[RunRecord], config: GateConfig) -> None:
    supported = [r for r in runs if r.outcome != "unsupported"]
    infra = sum(r.outcome == "infra_error" for r in supported)
    if supported and infra / len(supported) > config.max_infra_error_rate:
        raise GateInputError(f"{name}: {infra} of {len(supported)} {side} runs are infra errors, more than "
                             f"max_infra_error_rate {config.max_infra_error_rate:.0%}; fix the backend and rerun")
    if not any(r.counted for r in runs):
        raise GateInputError(f"{name}: the {side} cell has no counted runs")


def _test(base: list[RunRecord], cand: list[RunRecord], b: Rate, c: Rate, config: GateConfig
          ) -> tuple[str, float]:
    pairs = paired_outcomes(base, cand) if config.pairing != "unpaired" else None
    if pairs is not None:
        lost = sum(x and not y for x, y in pairs)
        gained = sum(y and not x for x, y in pairs)
        return f"McNemar exact, paired ({lost} lost, {gained} gained)", mcnemar(lost, gained)
    if config.pairing == "paired":
        raise GateInputError("pairing: paired, but the runs do not pair up by scenario, index and seed")
    if config.test == "fisher":
        return "Fisher exact", fisher(b.x, b.n, c.x, c.n)
    return "Boschloo exact", boschloo(b.x, b.n, c.x, c.n)


def _pts(value: float) -> str:
    points = round(value * 100)
    return f"{points:+d}" if points else "0"


def _reasons(v: CellVerdict, alpha: float) -> tuple[str, ...]:
    out = []
    if v.p_holm <= alpha and v.difference.estimate < 0:
        d = v.difference
        out.append(f"completion dropped {v.baseline.value:.0%} → {v.candidate.value:.0%} "
                   f"({_pts(d.estimate)} pts, unpaired "
                   f"95% CI [{_pts(d.low)}, {_pts(d.high)}]); one-sided {v.test} p = {v.p:.4f}, "
                   f"Holm-adjusted {v.p_holm:.4f} ≤ α = {alpha}"
                   + (f"; largest drops: {', '.join(v.worst)}" if v.worst else ""))
    if v.floor is not None and v.candidate.low < v.floor:
        out.append(f"lower 95% Wilson bound {v.candidate.low:.1%} of the candidate's {v.candidate.x}/"
                   f"{v.candidate.n} is under the floor {v.floor:.0%}")
    return tuple(out)


def _verdict(name: str, base: list[RunRecord], cand: list[RunRecord], config: GateConfig) -> CellVerdict:
    b = rate(sum(r.completed for r in base if r.counted), sum(r.counted for r in base))
    c = rate(sum(r.completed for r in cand if r.counted), sum(r.counted for r in cand))
    assert b is not None and c is not None  # _usable checked both sides have counted runs
    test, p = _test(base, cand, b, c, config)
    floors = {config.floor_for(r) for r in cand}
    floor = max((f for f in floors if f is not None), default=None)  # pooled cells: the strictest
    models = (base[0].cell.model, cand[0].cell.model)
    worst = _worst_scenarios(base, cand) if config.level == "cell" else ()
    return CellVerdict(name, models, b, c, newcombe(c.x, c.n, b.x, b.n), test, p, p, floor, (), worst)


def _worst_scenarios(base: list[RunRecord], cand: list[RunRecord], limit: int = 3) -> tuple[str, ...]:
    def tally(runs: list[RunRecord]) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for r in runs:
            if r.counted:
                x, n = out.get(r.cell.scenario, (0, 0))
                out[r.cell.scenario] = (x + r.completed, n + 1)
        return out

    b, c = tally(base), tally(cand)
    drops = sorted(((b[s][0] / b[s][1] - c[s][0] / c[s][1], s) for s in b.keys() & c.keys()), reverse=True)
    return tuple(f"{s} {b[s][0]}/{b[s][1]} → {c[s][0]}/{c[s][1]}" for drop, s in drops[:limit] if drop > 0)


def _notes(verdicts: Sequence[CellVerdict]) -> tuple[str, ...]:
    changes = sorted({f"model changed: {v.models[0]} → {v.models[1]} ({v.name.split('/')[0]})"
                      for v in verdicts if v.models[0] != v.models[1]})
    return tuple(changes)


def compare(baseline: Results, candidate: Results, config: GateConfig | None = None) -> GateResult:
    """Compare every matching cell; raises GateInputError when the inputs cannot be compared."""
    config = config or GateConfig()
    base, cand = _group(baseline, config), _group(candidate, config)
    _check_keys(base, cand, config)
    verdicts, skipped = [], []
    for key in sorted(base):
        name = _name(key, config)
        unsupported = [all(r.outcome == "unsupported" for r in runs) for runs in (base[key], cand[key])]
        if all(unsupported):
            skipped.append(name)
            continue
        if any(unsupported):
            side = "baseline" if unsupported[0] else "candidate"
            raise GateInputError(f"{name}: unsupported in the {side} only; the two sides ran different setups")
        if config.level == "cell":
            _same_scenarios(name, base[key], cand[key])
        _usable(name, "baseline", base[key], config)
        _usable(name, "candidate", cand[key], config)
        verdicts.append(_verdict(name, base[key], cand[key], config))
    adjusted = [replace(v, p_holm=p) for v, p in zip(verdicts, holm([v.p for v in verdicts]), strict=True)]
    final = [replace(v, reasons=_reasons(v, config.alpha)) for v in adjusted]
    return GateResult(tuple(final), tuple(skipped), _notes(final), config.alpha, config.level,
                      baseline.simulated or candidate.simulated)


# --- output ------------------------------------------------------------------------------------

_SIMULATED = "SIMULATED results: at least one side comes from the simulated backend, not a real model."


def _headline(result: GateResult) -> str:
    verdict = "PASS" if result.passed else "FAIL"
    return (f"evalkit gate: {verdict}: {len(result.failed)} of {len(result.cells)} cells failed "
            f"(level {result.level}; α = {result.alpha}, Holm across {len(result.cells)} cells)")


def _cell_line(v: CellVerdict) -> str:
    return (f"{v.name}: {v.baseline.x}/{v.baseline.n} → {v.candidate.x}/{v.candidate.n} "
            f"({_pts(v.difference.estimate)} pts), p = {v.p:.4f}, Holm {v.p_holm:.4f}")


def render_text(result: GateResult, *, verbose: bool = False) -> str:
    lines = [_headline(result)]
    if result.simulated:
        lines.append(_SIMULATED)
    lines += [f"note: {n}" for n in result.notes]
    for v in result.failed:
        lines.append(f"FAIL {v.name}")
        lines += [f"     - {reason}" for reason in v.reasons]
    if verbose:
        lines += [f"pass {_cell_line(v)}" for v in result.cells if not v.failed]
    lines += [f"skipped {name}: unsupported on both sides" for name in result.skipped]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(result: GateResult) -> str:
    lines = [f"## {_md(_headline(result))}", ""]
    if result.simulated:
        lines += [f"> **{_SIMULATED}**", ""]
    lines += [f"- {_md(n)}" for n in result.notes]
    lines += ["", "| cell | baseline | candidate | change | test | p | Holm p | floor | result |",
              "|---|---|---|---|---|---|---|---|---|"]
    for v in sorted(result.cells, key=lambda v: (not v.failed, v.name)):
        lines.append(
            f"| {_md(v.name)} | {v.baseline.x}/{v.baseline.n} ({v.baseline.value:.0%}) | {v.candidate.x}/"
            f"{v.candidate.n} ({v.candidate.value:.0%}) | {_pts(v.difference.estimate)} pts "
            f"[{_pts(v.difference.low)}, {_pts(v.difference.high)}] | {_md(v.test)} | {v.p:.4f} | {v.p_holm:.4f} | "
            f"{'' if v.floor is None else f'{v.floor:.0%}'} | "
            f"{'**FAIL**: ' + _md('; '.join(v.reasons)) if v.failed else 'pass'} |")
    lines += [f"| {_md(name)} | | | | | | | | skipped (unsupported) |" for name in result.skipped]
    return "\n".join(lines) + "\n"


def render_junit(result: GateResult) -> str:
    """JUnit XML: one test case per cell, a failure element with the reasons for failed cells."""
    suite = ET.Element("testsuite", name="evalkit gate" + (" (SIMULATED)" if result.simulated else ""),
                       tests=str(len(result.cells) + len(result.skipped)), failures=str(len(result.failed)),
                       errors="0", skipped=str(len(result.skipped)))
    for v in result.cells:
        case = ET.SubElement(suite, "testcase", classname=_classname(v.name), name=v.name, time="0")
        if v.failed:
            failure = ET.SubElement(case, "failure", message="; ".join(v.reasons), type="regression")
            failure.text = _cell_line(v)
    for name in result.skipped:
        case = ET.SubElement(suite, "testcase", classname=_classname(name), name=name, time="0")
        ET.SubElement(case, "skipped", message="unsupported on both sides")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _classname(name: str) -> str:
    return "evalkit.gate." + ".".join(name.split("/")[:3])
