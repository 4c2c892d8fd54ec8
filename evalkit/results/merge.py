"""Merging results files: the shards of one run (`run --shard i/n`) into one file.

The rules, checked before anything is written:

- every input comes from the same config (`config_hash`) and the same evalkit version;
- a run id may hold a record in one input only. The one exception is an `infra_error`: a run whose
  backend stayed down on one machine and was run again elsewhere. Its infra_error records are kept
  (each input is copied whole, headers and footers included) and the reader lets the later, real
  record supersede them (`load_results`); two inputs that both hold a real record of a run are
  refused, since they would disagree about what happened;
- a record in a file labelled shard `i/n` must belong to that shard (a file renamed by hand, or a
  shard run with another plan, is refused);
- runs of the plan that no input holds are reported as missing (the merged file is still written:
  `evalkit run CONFIG --resume -o MERGED` runs them);
- the inputs pass the integrity check a report makes (`evalkit.results.integrity`): no footer that
  miscounts its segment, no run recorded twice with two verdicts, no record contradicting itself.

The output is locked as a run locks its results file, and written to a temporary file in its folder
that is renamed at the end: an interrupted merge, or one that runs out of disk, leaves no output.

Records are copied unchanged, so the merged file's runs equal those of one local run with the same
seed; only the segments' headers (one per shard, each with its own provenance) tell them apart.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import ResultsError
from evalkit.results.integrity import check_integrity, raise_errors
from evalkit.results.lock import hold_outputs
from evalkit.results.reader import iter_records, supersedes
from evalkit.results.records import Header, RunRecord
from evalkit.results.scan import scan_results
from evalkit.results.shards import Shard, parse_shard
from evalkit.results.writer import Opener, ResultsWriter

__all__ = ["MISSING_NAMED", "MergeReport", "merge_results", "missing_runs"]


@dataclass
class MergeReport:
    """What a merge wrote and what it found missing."""

    output: Path
    inputs: list[Path]
    runs: int = 0  # distinct run ids in the merged file
    superseded: int = 0  # infra_error records that a real record of another input replaces
    missing: list[str] = field(default_factory=list)  # the first MISSING_NAMED missing run ids, in plan order
    missing_count: int = 0  # every run of the plan no input holds
    shards: list[str] = field(default_factory=list)


@dataclass
class _Scan:
    header: Header
    shards: set[str] = field(default_factory=set)
    # run id -> input index holding its real (not infra_error) record
    real: dict[str, int] = field(default_factory=dict)
    infra: dict[str, int] = field(default_factory=dict)
    scenarios: set[str] = field(default_factory=set)


def _check_header(path: Path, header: Header, first: Header, first_path: Path) -> None:
    if header.config_hash != first.config_hash:
        raise ResultsError(
            f"{path}: config hash {header.config_hash} differs from {first_path}'s "
            f"{first.config_hash}: only shards of one config can be merged"
        )
    # another version may judge or record differently: its runs are not one experiment with these
    if header.evalkit_version != first.evalkit_version:
        raise ResultsError(
            f"{path}: written by evalkit {header.evalkit_version}, {first_path} by "
            f"{first.evalkit_version}: merge shards of one evalkit version"
        )


def _scan(paths: Sequence[Path]) -> _Scan:
    scan: _Scan | None = None
    for at, path in enumerate(paths):
        shard: Shard | None = None
        for record in iter_records(path):
            if isinstance(record, Header):
                if scan is None:
                    scan = _Scan(record)
                _check_header(path, record, scan.header, paths[0])
                shard = parse_shard(record.shard) if record.shard else None
                if record.shard:
                    scan.shards.add(record.shard)
            elif isinstance(record, RunRecord):
                if scan is None:
                    raise ResultsError(f"{path}: a run record before any header: not an evalkit results file")
                _take(scan, at, path, paths, record, shard)
    if scan is None:
        raise ResultsError("merge: no results file given")
    return scan


def _take(scan: _Scan, at: int, path: Path, paths: Sequence[Path], record: RunRecord, shard: Shard | None) -> None:
    if shard is not None and not shard.holds(record.run_id):
        raise ResultsError(f"{path}: run {record.run_id} does not belong to shard {shard} named in its header")
    scan.scenarios.add(record.cell.scenario)
    if supersedes(record.outcome):  # an infra_error: kept only while no input has a real record
        scan.infra.setdefault(record.run_id, at)
        return
    other = scan.real.get(record.run_id)
    # a repeat within one input is the reader's to count (a resume); across inputs it is an overlap
    if other is not None and other != at:
        raise ResultsError(
            f"run {record.run_id} has a record in both {paths[other]} and {path}: "
            "shards must not overlap (only an infra_error may be superseded)"
        )
    scan.real[record.run_id] = at


MISSING_NAMED = 20


def missing_runs(header: Header, scenarios: Iterable[str], present: set[str]) -> tuple[int, list[str]]:
    """(How many runs of the plan no input holds, the first MISSING_NAMED of them in the plan's order).
    The plan
    is the header's config (backends, modes, strategies) times the scenario ids the runs name times
    its `runs_per_cell`, counted cell by cell, never listed whole: a header that claims 100,000,000
    runs a cell costs no more than one that claims 5.

    Scenario files are not read (the shards may come from other machines), so a scenario with no
    run in any input is not counted as missing.
    """
    config = header.config
    labels = [str(b["label"]) for b in config.get("backends", [])]
    modes = [str(m) for m in config.get("modes", [])]
    strategies = [str(s) for s in config.get("strategies", {})]
    held: dict[str, set[int]] = {}
    for run_id in present:
        # the writer's own ids end in the run index (`backend/mode/strategy/scenario/index`)
        prefix, _, index = run_id.rpartition("/")
        if index.isdigit():
            held.setdefault(prefix, set()).add(int(index))
    count, named = 0, list[str]()
    for cell in (f"{a}/{b}/{c}/{d}" for a in labels for b in modes for c in strategies for d in sorted(scenarios)):
        # indices past the plan (a file resumed with more runs) fill no hole of this plan
        have = {i for i in held.get(cell, set()) if i < header.runs_per_cell}
        count += header.runs_per_cell - len(have)
        i = 0  # the first missing indices: at most len(have) + MISSING_NAMED steps
        while len(named) < MISSING_NAMED and i < header.runs_per_cell and len(named) < count:
            if i not in have:
                named.append(f"{cell}/{i}")
            i += 1
    return count, named


def merge_results(paths: Sequence[str | Path], output: str | Path, *, opener: Opener | None = None) -> MergeReport:
    """Check `paths` can be merged, then copy them into `output` (which must not exist).

    `opener` opens the temporary file (a seam for tests of a full disk)."""
    inputs = [Path(p) for p in paths]
    out = Path(output)
    with hold_outputs(out):
        if out.exists():
            raise ResultsError(f"{out} exists: merge into a new file")
        if any(p.resolve() == out.resolve() for p in inputs):
            raise ResultsError(f"{out}: the output cannot be one of the inputs")
        scan = _scan(inputs)
        # what a report would refuse to read must not be merged into a file that looks whole
        raise_errors(check_integrity(scan_results(inputs, 0)))
        present = set(scan.real) | set(scan.infra)
        report = MergeReport(
            output=out,
            inputs=inputs,
            runs=len(present),
            shards=sorted(scan.shards),
            superseded=sum(1 for run_id in scan.infra if run_id in scan.real),
        )
        report.missing_count, report.missing = missing_runs(scan.header, scan.scenarios, present)
        _copy(inputs, out.resolve(), opener)
    return report


def _copy(inputs: list[Path], out: Path, opener: Opener | None) -> None:
    """Write the inputs into `out` whole, or leave nothing: a temporary file renamed at the end."""
    tmp = out.with_name(f".{out.name}.merging")
    tmp.unlink(missing_ok=True)  # a leftover of a merge killed outright; the lock says none is running
    try:
        writer = ResultsWriter(tmp, opener=opener)
        try:
            # every record as it was, repeats included: the merged file reads as its inputs read together
            for path in inputs:
                for record in iter_records(path):
                    writer.write(record)
        finally:
            writer.close()
        # a rename within one directory: the output appears whole or not at all
        os.replace(tmp, out)
    except (ResultsError, OSError) as exc:
        raise ResultsError(
            f"{out}: merge failed, nothing was written ({_cause(exc)}): fix it, then merge again"
        ) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _cause(exc: ResultsError | OSError) -> str:
    cause = exc.__cause__ if isinstance(exc, ResultsError) else exc
    if isinstance(cause, OSError):
        return cause.strerror or str(cause)
    return str(exc)
