"""Transcripts for the drill-down: which runs to show, flattened to plain text fields.

Everything here is model output or derived from it, so it is untrusted: renderers must escape it
(the HTML template relies on jinja2's autoescape and never marks these fields safe).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from evalkit.chat import Message, ToolCall
from evalkit.results.records import RunRecord
from evalkit.results.runs import RunRow

__all__ = [
    "RequestSent",
    "Transcript",
    "TranscriptMessage",
    "pick_failed",
    "pick_passing",
    "prepare_choices",
    "transcript",
]

# whole records, or rows of the run table: picking reads only the fields both have
R = TypeVar("R", bound=RunRow)
# one runaway reply must not blow up the report; the results file keeps the full text
MAX_CHARS = 4000


@dataclass(frozen=True)
class TranscriptMessage:
    role: str
    origin: str
    content: str
    calls: tuple[str, ...]


@dataclass(frozen=True)
class RequestSent:
    """One model call as it went over the wire, beside the conversation the transcript shows."""

    index: int
    tools: tuple[str, ...]
    tool_choice: str | None
    constraint: str | None  # "grammar:<sha>" / "json_schema:<sha>"
    system_sent: str | None  # the system prompt as sent, when it differs from the transcript's
    finish_reason: str
    tokens: int
    latency_s: float
    decision: str


@dataclass(frozen=True)
class Transcript:
    run_id: str
    index: int
    seed: int
    outcome: str
    completed: bool
    correct: bool
    failure: str | None
    retries: int
    error: str | None
    failed_checks: tuple[str, ...]
    interventions: tuple[str, ...]  # "call N · strategy · action: reason"
    messages: tuple[TranscriptMessage, ...]
    simulated: bool
    mode: str = "native"
    requests: tuple[RequestSent, ...] = ()


def _clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f"… [{len(text) - MAX_CHARS} more characters in the results file]"


def _call_text(call: ToolCall) -> str:
    # malformed arguments shown as the model wrote them, with why they did not parse: that is the finding
    if call.arguments is None:
        return _clip(f"{call.name}(<malformed: {call.parse_error}>) {call.raw_arguments or ''}")
    # sorted keys: two runs that called alike read alike, whatever order each model wrote them in
    return _clip(f"{call.name}({json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)})")


def _message(message: Message) -> TranscriptMessage:
    name = f" {message.name}" if message.role == "tool" and message.name else ""
    return TranscriptMessage(
        role=message.role + name,
        origin=message.origin,
        content=_clip(message.content),
        calls=tuple(_call_text(c) for c in message.tool_calls),
    )


def transcript(run: RunRecord) -> Transcript:
    """A whole record's transcript; a row of the run table has none (take the records `Results.whole` kept)."""
    return Transcript(
        run_id=run.run_id,
        index=run.index,
        seed=run.seed,
        outcome=run.outcome,
        completed=run.completed,
        correct=run.correct,
        failure=run.failure,
        retries=run.retries,
        error=run.error,
        failed_checks=tuple(f"{c.item}{': ' + c.detail if c.detail else ''}" for c in run.check if not c.passed),
        interventions=tuple(f"call {i.call_index} · {i.strategy} · {i.action}: {i.reason}" for i in run.interventions),
        messages=tuple(_message(m) for m in run.messages),
        simulated=run.simulated,
        mode=run.cell.mode,
        requests=tuple(
            RequestSent(
                index=c.index,
                tools=tuple(c.tools),
                tool_choice=c.tool_choice,
                constraint=c.constraint,
                system_sent=_clip(c.system_sent) if c.system_sent is not None else None,
                finish_reason=c.completion.finish_reason,
                tokens=c.completion.usage.prompt_tokens + c.completion.usage.completion_tokens,
                latency_s=c.completion.latency_s,
                decision=c.decision,
            )
            for c in run.calls
        ),
    )


def pick_failed(runs: Sequence[R], limit: int) -> list[R]:
    """Up to `limit` counted runs that were not correct: one per failure category first, then by index."""
    failed = sorted((r for r in runs if r.counted and not r.correct), key=lambda r: r.index)
    chosen: list[R] = []
    seen: set[str | None] = set()
    # one of each failure category first: a drill-down of three shows three kinds of failure, not one kind thrice
    for run in failed:
        if run.failure not in seen and len(chosen) < limit:
            seen.add(run.failure)
            chosen.append(run)
    taken = {r.run_id for r in chosen}
    # then the lowest indices fill what is left of the limit
    chosen += [r for r in failed if r.run_id not in taken][: limit - len(chosen)]
    return sorted(chosen, key=lambda r: r.index)


def pick_passing(runs: Sequence[R]) -> R | None:
    passing = [r for r in runs if r.counted and r.correct]
    # the lowest index: the same run whatever the file order, and the one the scan keeps whole
    return min(passing, key=lambda r: r.index) if passing else None


def prepare_choices(runs: Sequence[RunRow]) -> tuple[tuple[str, int], ...]:
    """How often each per-turn choice a guard made while preparing requests occurred (e.g. the
    context a `context_mode: auto` guard picked)."""
    counts = Counter(f"{i.strategy}: {i.reason}" for r in runs for i in r.prepared)
    return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
