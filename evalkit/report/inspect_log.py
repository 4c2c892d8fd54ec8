"""evalkit's runs in inspect_ai's log format, so that `inspect view` browses them:
`evalkit export inspect RESULTS -o DIR`.

One log per report column (backend · model · mode · strategy), one sample per run: the sample's id
is the scenario (`family/scenario`), its epoch the run's index + 1, its messages the transcript
(tool calls and mocked results included; a guard's or the harness's message says so in its
metadata), its score `correct` (inspect's "C"/"I", the failure category as the explanation) with
`completed` beside it, and its metadata the run's record (outcome, retries, model calls, latency,
seed). Runs not counted in rates carry no score (an infra error is the sample's error). Simulated
results say SIMULATED in the task name, the tags and every sample's metadata. Model output is
untrusted: each log asks the viewer to show its content as plain text (`trust_content=False`).

inspect_ai is an optional extra (`pip install 'evalkit[inspect]'`): its own types and writer make the
files, so they are in the format of the installed inspect_ai, and are read back with its reader in
tests/report/test_inspect_log.py.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from evalkit.chat import Message
from evalkit.errors import EvalkitError, OutputError
from evalkit.report.provenance import stack_text
from evalkit.results.records import Header, Results, RunRecord

__all__ = ["InspectMissing", "export_inspect", "log_name"]

SIMULATED = "SIMULATED"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class InspectMissing(EvalkitError):
    def __init__(self) -> None:
        super().__init__("inspect_ai is not installed; install the optional extra: pip install 'evalkit[inspect]'")


def _inspect() -> Any:
    try:
        import inspect_ai.log
    except ImportError:
        raise InspectMissing() from None
    return inspect_ai


def log_name(header: Header, key: tuple[str, str, str, str]) -> str:
    """inspect's file naming (`<created>_<task>_<id>.eval`): the run's start, config and column."""
    started = _UNSAFE.sub("-", header.started_at.split("+")[0])
    column = _UNSAFE.sub("-", "-".join(key)).strip("-")
    return f"{started}_{_UNSAFE.sub('-', header.config_name)}_{column}.eval"


def _id(*parts: str) -> str:
    """A stable id: the viewer takes logs that share a task id for retries of one another, and shows one."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:22]


def _tool_calls(message: Message) -> list[Any] | None:
    from inspect_ai.tool import ToolCall

    calls = [
        ToolCall(
            id=call.id or f"call_{i}",
            function=call.name,
            arguments=call.arguments if call.arguments is not None else {},
            parse_error=call.parse_error,
        )
        for i, call in enumerate(message.tool_calls)
    ]
    return calls or None


def _message(message: Message) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    meta = {"origin": message.origin}
    if message.role == "system":
        return ChatMessageSystem(content=message.content, metadata=meta)
    if message.role == "assistant":
        return ChatMessageAssistant(content=message.content, tool_calls=_tool_calls(message), metadata=meta)
    if message.role == "tool":
        return ChatMessageTool(
            content=message.content, tool_call_id=message.tool_call_id, function=message.name, metadata=meta
        )
    return ChatMessageUser(content=message.content, metadata=meta)


def _scores(run: RunRecord) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    if not run.counted:
        return {}
    return {
        "correct": Score(value="C" if run.correct else "I", explanation=run.failure or "correct"),
        "completed": Score(value="C" if run.completed else "I", explanation=run.outcome),
    }


def _usage(runs: list[RunRecord]) -> Any:
    from inspect_ai.model import ModelUsage

    prompt = sum(r.usage.prompt_tokens for r in runs)
    completion = sum(r.usage.completion_tokens for r in runs)
    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def _model(cell: Any) -> str:
    return str(cell.model if cell.model == cell.backend else f"{cell.backend}/{cell.model}")


def _sample(run: RunRecord) -> Any:
    from inspect_ai.log import EvalError, EvalSample

    messages = [_message(m) for m in run.messages]
    first_user = next((m.content for m in run.messages if m.role == "user"), "")
    metadata: dict[str, Any] = {
        "run_id": run.run_id,
        "family": run.cell.family,
        "scenario": run.cell.scenario,
        "outcome": run.outcome,
        "failure": run.failure,
        "retries": run.retries,
        "model_calls": run.model_calls,
        "latency_s": run.latency_s,
        "seed": run.seed,
        "simulated": run.simulated,
    }
    if run.simulated:
        metadata["label"] = SIMULATED
    error = None
    if run.outcome == "infra_error":
        error = EvalError(message=run.error or "infra error", traceback="", traceback_ansi="")
    return EvalSample(
        id=f"{run.cell.family}/{run.cell.scenario}",
        epoch=run.index + 1,
        input=first_user,
        target="",
        messages=messages,
        scores=_scores(run),
        metadata=metadata,
        error=error,
        total_time=run.wall_s,
        model_usage={_model(run.cell): _usage([run])},
    )


def _results(runs: list[RunRecord]) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    counted = [r for r in runs if r.counted]
    scores = []
    for name in ("correct", "completed"):
        value = sum(getattr(r, name) for r in counted) / len(counted) if counted else 0.0
        metric = EvalMetric(name="accuracy", value=value)
        scores.append(EvalScore(name=name, scorer=name, scored_samples=len(counted), metrics={"accuracy": metric}))
    return EvalResults(total_samples=len(runs), completed_samples=len(counted), scores=scores)


def _log(header: Header, key: tuple[str, str, str, str], runs: list[RunRecord], finished: str | None) -> Any:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, EvalStats
    from inspect_ai.viewer import ViewerConfig

    _, _, mode, strategy = key
    simulated = any(r.simulated for r in runs)
    strategies = header.config.get("strategies", {})
    guards = stack_text(strategies.get(strategy, strategy)) if isinstance(strategies, dict) else strategy
    spec = EvalSpec(
        eval_id=_id(header.config_hash, header.started_at, *key),
        run_id=_id(header.config_hash, header.started_at),
        task_id=_id(header.config_name, *key),
        created=header.started_at,
        task=f"{header.config_name} [{SIMULATED}]" if simulated else header.config_name,
        task_args={"mode": mode, "strategy": strategy, "guards": guards},
        dataset=EvalDataset(name=header.config_name, samples=len({r.cell.scenario for r in runs})),
        model=_model(runs[0].cell),
        config=EvalConfig(epochs=header.runs_per_cell),
        tags=[SIMULATED] if simulated else [],
        viewer=ViewerConfig(trust_content=False),  # model output is untrusted: shown as plain text
        metadata={
            "evalkit_version": header.evalkit_version,
            "config_hash": header.config_hash,
            "git_sha": header.git_sha,
            "seed": header.seed,
            "simulated": simulated,
        },
    )
    return EvalLog(
        status="success" if finished else "started",
        eval=spec,
        results=_results(runs),
        stats=EvalStats(
            started_at=header.started_at,
            completed_at=finished or "",
            model_usage={_model(runs[0].cell): _usage(runs)},
        ),
        samples=[_sample(r) for r in runs],
    )


def export_inspect(results: Results, folder: str | Path) -> list[Path]:
    """Write one inspect log per column of `results` into `folder`; the paths written."""
    inspect_ai = _inspect()
    folder = Path(folder)
    columns: dict[tuple[str, str, str, str], list[RunRecord]] = defaultdict(list)
    for run in results.runs:
        c = run.cell
        columns[(c.backend, c.model, c.mode, c.strategy)].append(run)
    header = results.headers[0]  # the first run of the config: shards and resumes share its name
    finished = next((f.finished_at for f in reversed(results.footers) if f.status == "complete"), None)
    written = []
    for key, runs in columns.items():
        path = folder / log_name(header, key)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            inspect_ai.log.write_eval_log(_log(header, key, runs, finished), str(path))
        except OSError as exc:
            raise OutputError(f"-o {folder}: cannot write {path.name}: {exc.strerror or exc}") from exc
        written.append(path)
    return written
