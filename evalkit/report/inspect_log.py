"""evalkit's runs in inspect_ai's log format, so that `inspect view` browses them:
`evalkit export inspect RESULTS -o DIR [--overwrite]`.

One log per report column (backend · model · mode · strategy), its task named after the config and
the column, its file named by the column's plain characters and a hash of its exact names (`a+b` and
`a-b` are two logs). One sample per run: its id the scenario (`sample_id`: a name that is not plain
gets its plain characters and a hash, so every zip entry is safe and distinct), its epoch the run's
index + 1, its messages the transcript (tool calls and mocked results included; a guard's or the
harness's message says so in its metadata), its target what the run's check expects (its items),
its scores `correct` (inspect's "C"/"I", the failure category as the explanation) and `completed`,
each with the run's answer (the final reply, or the terminal call), and its metadata the run's record
(outcome, retries, model calls, latency, seed). Runs not counted in rates carry no score (an infra
error is the sample's error), and a column with no counted run has no score at all. Simulated results
say SIMULATED in the task name, the tags and every sample's metadata. Model output is untrusted: each
log asks the viewer to show its content as plain text (`trust_content=False`).

The runs stream: `load_checked` reads the files once as `report` does (integrity, warnings, the
columns), then each group of columns reads them once more, a line at a time, and writes each run's
sample as it is read (`inspect_archive.LogArchive`): memory does not grow with the transcripts.

inspect_ai is an optional extra (`pip install 'evalkit[inspect]'`): its own types make every member of
the archive, and tests/report/test_inspect_log.py reads the logs back with its reader.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from evalkit.chat import Message, ToolCall
from evalkit.errors import EvalkitError, OutputError
from evalkit.report.inspect_archive import LogArchive, check_target
from evalkit.report.provenance import stack_text
from evalkit.results.integrity import load_checked
from evalkit.results.records import Cell, Header, RunRecord
from evalkit.results.stream import kept_runs

__all__ = ["Export", "InspectMissing", "export_inspect", "log_name", "sample_id"]

SIMULATED = "SIMULATED"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,79}")
# columns written in one pass over the files: two open files each, well under a process's limit
_GROUP = 32

Key = tuple[str, str, str, str]


class InspectMissing(EvalkitError):
    def __init__(self) -> None:
        super().__init__("inspect_ai is not installed; install the optional extra: pip install 'evalkit[inspect]'")


class Export(NamedTuple):
    logs: list[Path]
    simulated: bool


def _inspect() -> None:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        raise InspectMissing() from None


def _digest(*parts: str) -> str:
    """A hash of `parts` as a JSON list: no two lists share one (joined by NUL, `a\\0b`,`c` and `a`,`b\\0c` did)."""
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _plain(text: str, limit: int) -> str:
    return _UNSAFE.sub("-", text).replace("..", "-").strip("-.")[:limit]


def log_name(header: Header, key: Key) -> str:
    """inspect's file naming, `<created>_<task>_<task id>.eval`, which its listing parses at the underscores:
    the run's start, the config and the column in plain characters without `_`, and the log's task id (a
    hash of the config's and the column's exact names: no two columns share a file, `a+b` and `a-b` too)."""
    started = _plain(header.started_at.split("+")[0], 32).replace("_", "-")
    task = _plain(f"{header.config_name[:40]}-{'-'.join(key)}", 120).replace("_", "-")
    return f"{started}_{task}_{_task_id(header, key)}.eval"


def sample_id(scenario: str) -> str:
    """The scenario where it is a plain name; otherwise its plain characters, `~` and a hash of it. No plain
    name holds `~`, `/`, `..` or `_epoch_` (the viewer splits an entry `samples/<id>_epoch_<n>.json` there)."""
    if _PLAIN_ID.fullmatch(scenario) and ".." not in scenario and "_epoch_" not in scenario:
        return scenario
    return f"{_plain(scenario, 60).replace('_epoch_', '-epoch-')}~{_digest(scenario)[:12]}"


def _id(*parts: str) -> str:
    return _digest(*parts)[:22]


def _task_id(header: Header, key: Key) -> str:
    """A column's own id: the viewer takes logs that share a task id for retries of one another, and shows one."""
    return _id(header.config_name, *key)


def _column(cell: Cell) -> Key:
    return (cell.backend, cell.model, cell.mode, cell.strategy)


def _tool_calls(message: Message) -> list[Any] | None:
    from inspect_ai.tool import ToolCall as InspectCall

    calls = [
        InspectCall(
            # inspect pairs a call with its result by id: a call without one is named by its position
            id=call.id or f"call_{i}",
            function=call.name,
            # arguments that did not parse are {} here; `parse_error` carries why, as inspect shows it
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


def _call_text(call: ToolCall) -> str:
    if call.arguments is None:
        return f"{call.name}({call.raw_arguments or ''})"
    return f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})"


def _answer(run: RunRecord) -> str | None:
    """The run's answer: the terminal call where the run ended on one, else the last assistant message's
    text (or, without text, its calls)."""
    last = next((m for m in reversed(run.messages) if m.role == "assistant"), None)
    if last is None:
        return None
    calls = "\n".join(_call_text(c) for c in last.tool_calls)
    # a run that ended on its terminal tool answered with that call, whatever text came with it
    if run.outcome == "terminal_tool" and calls:
        return calls
    return last.content or calls or None


def _target(run: RunRecord) -> list[str] | str:
    """What the run's check expects: its items as the judge labelled them (per-turn items say their turn)."""
    return [item.item if item.turn is None else f"turn {item.turn + 1}: {item.item}" for item in run.check] or ""


def _scores(run: RunRecord) -> dict[str, Any]:
    from inspect_ai.scorer import Score

    # an uncounted run (infra error, unsupported) is no verdict on the model: no score, not a 0
    if not run.counted:
        return {}
    answer = _answer(run)
    return {
        "correct": Score(value="C" if run.correct else "I", answer=answer, explanation=run.failure or "correct"),
        "completed": Score(value="C" if run.completed else "I", answer=answer, explanation=run.outcome),
    }


def _usage(prompt: int, completion: int) -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion)


def _model(cell: Cell) -> str:
    # the backend's label where it adds something: two backends may serve one model name
    return cell.model if cell.model == cell.backend else f"{cell.backend}/{cell.model}"


def _sample(run: RunRecord) -> Any:
    from inspect_ai.log import EvalError, EvalSample

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
        id=sample_id(run.cell.scenario),
        # inspect counts epochs from 1; evalkit's run index is 0-based
        epoch=run.index + 1,
        input=next((m.content for m in run.messages if m.role == "user"), ""),
        target=_target(run),
        messages=[_message(m) for m in run.messages],
        scores=_scores(run),
        metadata=metadata,
        error=error,
        total_time=run.wall_s,
        model_usage={_model(run.cell): _usage(run.usage.prompt_tokens, run.usage.completion_tokens)},
    )


@dataclass
class _Tally:
    """A column's totals, added up as its runs are written (the log's header comes last)."""

    cell: Cell | None = None
    runs: int = 0
    counted: int = 0
    correct: int = 0
    completed: int = 0
    tokens: list[int] = field(default_factory=lambda: [0, 0])
    scenarios: set[str] = field(default_factory=set)
    simulated: bool = False

    def add(self, run: RunRecord) -> None:
        self.cell = self.cell or run.cell
        self.runs += 1
        self.counted += run.counted
        self.correct += run.counted and run.correct
        self.completed += run.counted and run.completed
        self.tokens[0] += run.usage.prompt_tokens
        self.tokens[1] += run.usage.completion_tokens
        self.scenarios.add(run.cell.scenario)
        self.simulated |= run.simulated


def _results(tally: _Tally) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    scores = [
        EvalScore(
            name=name,
            scorer=name,
            scored_samples=tally.counted,
            metrics={"accuracy": EvalMetric(name="accuracy", value=hits / tally.counted)},
        )
        for name, hits in (("correct", tally.correct), ("completed", tally.completed))
        if tally.counted  # nothing counted: no score, not an accuracy of 0
    ]
    return EvalResults(total_samples=tally.runs, completed_samples=tally.counted, scores=scores)


def _log(header: Header, key: Key, tally: _Tally, finished: str | None) -> Any:
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, EvalStats
    from inspect_ai.viewer import ViewerConfig

    backend, model, mode, strategy = key
    strategies = header.config.get("strategies", {})
    guards = stack_text(strategies.get(strategy, strategy)) if isinstance(strategies, dict) else strategy
    task = f"{header.config_name} · {backend} · {model} · {mode} · {strategy}"
    name = _model(tally.cell) if tally.cell else model
    spec = EvalSpec(
        eval_id=_id(header.config_hash, header.started_at, *key),
        run_id=_id(header.config_hash, header.started_at),
        task_id=_task_id(header, key),
        created=header.started_at,
        task=f"{task} [{SIMULATED}]" if tally.simulated else task,
        task_args={"mode": mode, "strategy": strategy, "guards": guards},
        dataset=EvalDataset(name=header.config_name, samples=len(tally.scenarios)),
        model=name,
        config=EvalConfig(epochs=header.runs_per_cell),
        tags=[SIMULATED] if tally.simulated else [],
        viewer=ViewerConfig(trust_content=False),  # model output is untrusted: shown as plain text
        metadata={
            "evalkit_version": header.evalkit_version,
            "config_hash": header.config_hash,
            "git_sha": header.git_sha,
            "seed": header.seed,
            "simulated": tally.simulated,
        },
    )
    return EvalLog(
        status="success" if finished else "started",
        eval=spec,
        results=_results(tally),
        stats=EvalStats(
            started_at=header.started_at, completed_at=finished or "", model_usage={name: _usage(*tally.tokens)}
        ),
    )


def _columns(paths: list[str | Path]) -> tuple[Header, str | None, dict[Key, int], bool]:
    """The first header, the last complete footer's end, each column's run count (in order of first
    appearance) and whether any run is simulated: the read `report` makes (integrity, warnings)."""
    results = load_checked(paths, transcripts=0)
    counts: dict[Key, int] = {}
    for run in results.runs:
        key = _column(run.cell)
        counts[key] = counts.get(key, 0) + 1
    # the last complete footer: a log whose run never completed is written as "started"
    finished = next((f.finished_at for f in reversed(results.footers) if f.status == "complete"), None)
    return results.headers[0], finished, counts, results.simulated  # shards and resumes share the first name


def _write_group(paths: list[str | Path], header: Header, group: dict[Key, LogArchive], finished: str | None) -> None:
    """One pass over the files: each run of `group`'s columns written to its log as it is read."""
    tallies = {key: _Tally() for key in group}
    for run in kept_runs(paths, lambda cell: _column(cell) in group):
        key = _column(run.cell)
        group[key].add(_sample(run), run.run_id)
        tallies[key].add(run)
    for key, archive in group.items():
        archive.close(_log(header, key, tallies[key], finished))


def export_inspect(
    paths: Iterable[str | Path], folder: str | Path, *, overwrite: bool = False, option: str = "-o"
) -> Export:
    """Write one inspect log per column of the results `paths` into `folder` (see the module's docstring).
    Every log is checked before anything is written, and renamed into place only when all are whole."""
    _inspect()
    paths, folder = list(paths), Path(folder)
    header, finished, counts, simulated = _columns(paths)
    targets = {key: folder / log_name(header, key) for key in counts}
    if len(set(targets.values())) < len(targets):
        raise OutputError(f"{option} {folder}: two columns were given one log name")  # a hash collision
    # every target checked before the first is written: a refusal leaves the folder as it was
    for target in targets.values():
        check_target(target, option=option, overwrite=overwrite)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{option} {folder}: cannot create: {exc.strerror or exc}") from exc
    archives: list[LogArchive] = []
    try:
        keys = list(targets)
        # a pass over the files per group of columns: memory holds a group's open archives, not all
        for start in range(0, len(keys), _GROUP):
            group: dict[Key, LogArchive] = {}
            for key in keys[start : start + _GROUP]:  # one at a time: each made is discarded on a failure
                archives.append(group.setdefault(key, LogArchive(targets[key], option=option, expected=counts[key])))
            _write_group(paths, header, group, finished)
        return Export([archive.publish(overwrite=overwrite) for archive in archives], simulated)
    except BaseException:
        for archive in archives:
            archive.discard()
        raise
