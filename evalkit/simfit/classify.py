"""Every recorded model call of one model, placed in the simulated profile's situations and behaviours.

Each counted real run is replayed through the agent loop from its stored completions (as `evalkit
rescore` does), so each call is seen with the very request the model answered: the messages (was
the last one a guard's nudge?), the offered tools (was `respond` offered?), the constraint and
`tool_choice`. Where the run stands is worked out as the simulated backend does (how many of the
scenario's intended calls have been made, in order), except that an intended call counts as made
when the scenario's own check accepts it (`evalkit.judge`), not only when it is identical to the
reference: a real model may pass the check with other argument values the check allows.

Behaviours, at a tool step (an intended call is still to make): `correct` (the intended call, as
the check accepts it), `malformed_call` (a call whose arguments do not parse), `hallucinated_tool`
(a tool that was not offered), `premature_answer` (an answer through `respond`), `wrong_arguments`
(another call or other arguments), `call_as_text` (the intended call written in the reply's text, in a
form `rescue_parse` recovers, where the mode's own parsing found no call) and `text_instead_of_tool`
(prose). At a reply step: `reply`,
`respond` (the answer through `respond`) or `unneeded_tool_call` (any other call); an answer is also
`wrong_reply` when it fails the reply items (text, question, degenerate output) of the check in force.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.backends.base import RetryPolicy
from evalkit.backends.replay import ReplayBackend
from evalkit.backends.sim import RESPOND
from evalkit.chat import CallContext, ChatRequest, Completion, Message, ToolCall, ToolSpec
from evalkit.errors import ReplayMiss, ResultsError
from evalkit.judge.arguments import arguments_match
from evalkit.judge.calls import match_rules, uses_v2
from evalkit.judge.items import check_items
from evalkit.prompt_mode import parse_strict_calls
from evalkit.results.reader import iter_records
from evalkit.results.records import Header, RunRecord
from evalkit.run.config import recorded_stacks
from evalkit.run.loop import run_loop
from evalkit.scenario.matching import mismatch
from evalkit.scenario.model import CallCheck, Scenario
from evalkit.strategies import StrategySpec, build_stack
from evalkit.strategies.rescue_parse import rescue_calls

__all__ = ["Observation", "Recorded", "classify_files", "fits_intended", "tool_behaviour"]

_ONCE = RetryPolicy(attempts=1, base_delay_s=0.0, max_delay_s=0.0)


@dataclass(frozen=True)
class Observation:
    """One model call: its situation and what the model did."""

    source: str
    strategy: str
    scenario: str
    family: str
    mode: str
    step: str  # "tool" or "reply"
    nudged: bool
    constrained: bool
    forced: bool
    respond: bool  # `respond` was offered
    behaviour: str
    wrong_reply: bool = False  # an answer (text or `respond`) that fails the check's reply items


@dataclass
class Recorded:
    """What a fit needs from the results files: the calls, and where they came from."""

    model: str
    observations: list[Observation] = field(default_factory=list)
    sources: list[tuple[str, str]] = field(default_factory=list)  # (file name, sha256)
    model_sha256: str | None = None
    runs: int = 0
    skipped: int = 0  # runs the current loop could not replay from their outputs
    unknown: int = 0  # runs of a scenario not among the scenarios given
    # (file, mode, stack, scenario) -> the runs' verdicts; a cell of each file, run with its own settings
    cells: dict[tuple[str, str, str, str], list[bool]] = field(default_factory=dict)
    configs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (file, stack) -> header config


def _entries(scenario: Scenario, name: str) -> list[CallCheck]:
    checks = [scenario.check] + [t.check for t in scenario.turns if t.check is not None]
    return [e for c in checks if c.calls is not None for e in c.calls.required if e.name == name]


def fits_intended(scenario: Scenario, target: ToolCall, call: ToolCall) -> bool:
    """Does `call` make the intended call `target`, as the scenario's check would accept it?"""
    if call.name != target.name or call.arguments is None:
        return False
    entries = _entries(scenario, call.name)
    if not entries:  # no check names the tool (a terminal tool, say): the reference's values decide
        return mismatch(target.arguments or {}, call.arguments) is None
    rules = match_rules(scenario.check)
    tool = scenario.tool(call.name)
    schema = tool.parameters if tool else None
    if uses_v2(scenario):
        return any(
            arguments_match(e.arguments, call.arguments, rules, extra=e.extra_arguments, schema=schema) for e in entries
        )
    return any(mismatch(e.arguments, call.arguments) is None for e in entries)


def _progress(scenario: Scenario, messages: list[Message], intended: list[ToolCall]) -> int:
    done = 0
    for message in messages:
        made = message.tool_calls or (parse_strict_calls(message.content) if message.role == "assistant" else [])
        for call in made:
            if done < len(intended) and fits_intended(scenario, intended[done], call):
                done += 1
    return done


def tool_behaviour(
    scenario: Scenario, target: ToolCall, calls: list[ToolCall], offered: dict[str, ToolSpec], text: str
) -> str:
    if not calls:
        return "call_as_text" if _written_call(scenario, target, text, offered) else "text_instead_of_tool"
    if any(c.malformed or c.name_lost for c in calls):
        return "malformed_call"
    if any(c.name not in offered for c in calls):
        return "hallucinated_tool"
    if calls[0].name == RESPOND:
        return "premature_answer"
    return "correct" if fits_intended(scenario, target, calls[0]) else "wrong_arguments"


def _written_call(scenario: Scenario, target: ToolCall, text: str, offered: dict[str, ToolSpec]) -> bool:
    """Is this text reply the intended call written as text, in a form `rescue_parse` recovers? (A
    call it recovers that is not the intended one stays prose: the simulated model writes only the
    right call as text.)"""
    found = rescue_calls(text, offered) if text.strip() else None
    return found is not None and fits_intended(scenario, target, found[0][0])


_REPLY_KINDS = frozenset(
    {"reply", "reply_mentions", "reply_avoids", "asks_user", "question_mentions", "not_degenerate"}
)


def _wrong_reply(scenario: Scenario, messages: list[Message], calls: list[ToolCall], text: str) -> bool:
    """Does this answer fail the reply items of the check in force (the turn's, else the scenario's)?"""
    if calls and calls[0].name == RESPOND:
        text = str((calls[0].arguments or {}).get("message", ""))
    elif calls:
        return False
    turn = sum(1 for m in messages if m.role == "user" and m.origin != "guard") - 1
    own = scenario.turns[turn].check if 0 <= turn < len(scenario.turns) else None
    items = check_items(scenario, [], text, own or scenario.check)
    return any(not i.passed for i in items if i.kind in _REPLY_KINDS)


def _reply_behaviour(calls: list[ToolCall]) -> str:
    if not calls:
        return "reply"
    return "respond" if calls[0].name == RESPOND else "unneeded_tool_call"


def _observation(
    run: RunRecord, scenario: Scenario, source: str, request: ChatRequest, context: CallContext, completion: Completion
) -> Observation:
    """The situation of one model call (from the very request the model answered) and what it did."""
    intended = context.skill.calls
    offered = {t.name: t for t in context.offered_tools}
    calls = completion.tool_calls or (parse_strict_calls(completion.text) if context.mode == "prompt" else [])
    done = _progress(scenario, request.messages, intended)
    tool_step = done < len(intended)
    behaviour = (
        tool_behaviour(scenario, intended[done], calls, offered, completion.text)
        if tool_step
        else _reply_behaviour(calls)
    )
    cell = run.cell
    return Observation(
        source=source,
        strategy=cell.strategy,
        scenario=cell.scenario,
        family=cell.family,
        mode=cell.mode,
        step="tool" if tool_step else "reply",
        nudged=bool(request.messages) and request.messages[-1].origin == "guard",
        constrained=request.constraint is not None,
        forced=request.tool_choice == "required" or request.constraint is not None,
        respond=RESPOND in offered,
        behaviour=behaviour,
        wrong_reply=not tool_step and _wrong_reply(scenario, request.messages, calls, completion.text),
    )


async def _replay(run: RunRecord, scenario: Scenario, stack: list[StrategySpec], source: str) -> list[Observation]:
    """Each call of `run`, replayed from its stored completions through the current loop and
    classified; [] when the loop now needs a call that was never made (the run is skipped)."""
    seen: list[Observation] = []

    def observe(request: ChatRequest, context: CallContext, completion: Completion) -> None:
        seen.append(_observation(run, scenario, source, request, context, completion))

    try:
        await run_loop(
            scenario,
            build_stack(stack),
            ReplayBackend.of_run(run, observe),
            mode=run.cell.mode,
            sampling=run.sampling,
            run_id=run.run_id,
            seed=run.seed,
            policy=_ONCE,
        )
    except ReplayMiss:
        return []
    return seen


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _model_sha(header: Header, model: str) -> str | None:
    for info in header.backends.values():
        if info.get("model") == model and isinstance(info.get("model_sha256"), str):
            return str(info["model_sha256"])
    return None


def classify_files(
    paths: Iterable[str | Path], model: str, scenarios: list[Scenario], *, simulated: bool = False
) -> Recorded:
    """Every counted real run of `model` in `paths`, replayed and classified call by call (with
    `simulated`, simulated runs too: a fit to them must recover the profile that made them)."""
    by_id = {s.id: s for s in scenarios}
    found = Recorded(model=model)
    for path in map(Path, paths):
        found.sources.append((path.name, _sha256(path)))
        stacks: dict[str, list[StrategySpec]] = {}
        config: dict[str, Any] = {}
        proxied: set[str] = set()
        agents: set[str] = set()
        for record in iter_records(path):
            if isinstance(record, Header):
                config = dict(record.config)
                stacks = recorded_stacks(config, str(path))
                proxied = _behind_a_proxy(record)
                # an agent column's requests are its loop's, not a stack's: nothing to replay them with
                agents = set(record.agents) | set(config.get("agents") or {})
                found.model_sha256 = found.model_sha256 or _model_sha(record, model)
            elif (
                isinstance(record, RunRecord)
                and record.cell.backend not in proxied
                and record.cell.strategy not in agents
                and _wanted(record, model, simulated)
            ):
                if record.cell.scenario not in by_id:
                    found.unknown += 1
                    continue
                _add_run(found, record, by_id[record.cell.scenario], stacks, config, path.name)
    return found


def _behind_a_proxy(header: Header) -> set[str]:
    """The entries that reached the model through another program evalkit started in front of it (a
    guard proxy's `serve.phases`): their calls are what the proxy passed on, not the model's own."""
    out = set()
    for label, info in header.backends.items():
        started = info.get("started_by_evalkit") if isinstance(info, dict) else None
        phases = started.get("phases") if isinstance(started, dict) else None
        if isinstance(phases, list) and len(phases) > 1:
            out.add(label)
    return out


def _wanted(run: RunRecord, model: str, simulated: bool) -> bool:
    return run.cell.model == model and (simulated or not run.simulated) and run.counted and bool(run.calls)


def _add_run(
    found: Recorded,
    run: RunRecord,
    scenario: Scenario,
    stacks: dict[str, list[StrategySpec]],
    config: dict[str, Any],
    source: str,
) -> None:
    if run.cell.strategy not in stacks:
        raise ResultsError(f"{source}: run {run.run_id}: its header has no strategy stack {run.cell.strategy!r}")
    seen = asyncio.run(_replay(run, scenario, stacks[run.cell.strategy], source))
    if not seen:
        found.skipped += 1
        return
    found.runs += 1
    found.observations += seen
    found.cells.setdefault((source, run.cell.mode, run.cell.strategy, run.cell.scenario), []).append(run.correct)
    found.configs.setdefault((source, run.cell.strategy), config)
