"""Hand-made results for report and gate tests: RunRecords without running anything."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalkit.chat import Message, Sampling, ToolCall, Usage
from evalkit.results.records import Cell, Footer, Header, Intervention, RunRecord
from evalkit.results.runs import Results
from evalkit.results.writer import ResultsWriter

FAILURE_OF = {"final_answer": "text_instead_of_tool", "iteration_limit": "iteration_limit"}


def run(
    *,
    scenario: str = "s1",
    family: str = "fam",
    strategy: str = "trust_text",
    index: int = 0,
    completed: bool = True,
    outcome: str | None = None,
    backend: str = "sim",
    model: str = "m",
    mode: str = "native",
    seed: int | None = None,
    retries: int = 0,
    simulated: bool = False,
    messages: list[Message] | None = None,
    interventions: list[Intervention] | None = None,
    error: str | None = None,
) -> RunRecord:
    outcome = outcome or ("terminal_tool" if completed else "final_answer")
    counted = outcome not in ("infra_error", "unsupported")
    correct = completed and counted
    failure = None if correct or outcome == "unsupported" else FAILURE_OF.get(outcome, outcome)
    cell = Cell(backend=backend, model=model, mode=mode, strategy=strategy, scenario=scenario, family=family)
    return RunRecord(
        run_id=f"{backend}/{mode}/{strategy}/{scenario}/{index}",
        cell=cell,
        index=index,
        seed=index + 1000 if seed is None else seed,
        simulated=simulated,
        outcome=outcome,  # type: ignore[arg-type]
        completed=completed and counted,
        correct=correct,
        failure=failure,  # type: ignore[arg-type]
        first_try=correct and retries == 0,
        retries=retries,
        guard_fires=retries,
        model_calls=1 + retries,
        iterations=1 + retries,
        ideal_iterations=1,
        wasted_calls=retries,
        usage=Usage(),
        latency_s=0.0,
        wall_s=0.0,
        sampling=Sampling(),
        error=error,
        interventions=interventions or [],
        messages=messages
        or [
            Message(role="user", content="hi"),
            Message(role="assistant", tool_calls=[ToolCall(name="t", arguments={"a": 1})], origin="model"),
        ],
    )


def cell_runs(passes: int, n: int, **fields: Any) -> list[RunRecord]:
    """n runs of one cell, the first `passes` completed."""
    return [run(index=i, completed=i < passes, **fields) for i in range(n)]


def header(
    *,
    simulated: bool = False,
    name: str = "test",
    seed: int = 1,
    runs_per_cell: int = 25,
    backends: dict[str, dict[str, Any]] | None = None,
) -> Header:
    return Header(
        evalkit_version="0.0.test",
        git_sha="abc123",
        started_at="2026-01-01T00:00:00+00:00",
        config_name=name,
        config_hash="0123456789abcdef",
        config={},
        seed=seed,
        runs_per_cell=runs_per_cell,
        simulated=simulated,
        backends=backends or {"sim": {"kind": "sim", "model": "m"}},
    )


def results(runs: Iterable[RunRecord], **header_fields: Any) -> Results:
    return Results(headers=[header(**header_fields)], runs=list(runs), paths=["mem.jsonl"])


def write_results(path: Path, runs: Iterable[RunRecord], **header_fields: Any) -> Path:
    writer = ResultsWriter(path)
    writer.write(header(**header_fields))
    for record in runs:
        writer.write(record)
    writer.write(Footer(finished_at="2026-01-01T00:01:00+00:00", status="complete", runs_written=writer.runs_written))
    writer.close()
    return path
