"""One run: the agent loop between a backend and a scenario's mocked tools, under a guard stack.

Per model call: build the request → each strategy's `prepare` → (prompt mode: tools into the
system prompt) → the backend, with retries for faults → (prompt mode: parse calls out of the text)
→ each strategy's `judge` → execute, accept, retry or stop. Everything that happened is kept for
the run record; nothing here decides success (that is `checks.judge_run`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from dataclasses import dataclass, field

from evalkit.backends.base import Backend, Feature, RetryPolicy, call_with_retries
from evalkit.chat import CallContext, ChatRequest, Completion, Message, Sampling, ToolCall, ToolMode, Usage
from evalkit.errors import BackendError, BackendUnusable, UnsupportedFeature
from evalkit.prompt_mode import apply_prompt_mode, parse_strict_calls
from evalkit.results.records import Intervention, ModelCall, Outcome
from evalkit.scenario.mocks import execute_call, result_text
from evalkit.scenario.model import Scenario
from evalkit.scenario.statemocks import StatefulMocks
from evalkit.strategies.base import Accept, Decision, Execute, Retry, Rewrite, Stop, Strategy, TurnView

__all__ = ["RunState", "missing_features", "run_loop"]


@dataclass
class RunState:
    """What a run accumulates; the runner turns it into a `RunRecord`."""

    outcome: Outcome = "final_answer"
    error: str | None = None
    reply: str | None = None
    turn_replies: list[str | None] = field(default_factory=list)  # the accepted answer of each user turn
    retries: int = 0
    calls: list[ModelCall] = field(default_factory=list)
    interventions: list[Intervention] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    wall_s: float = 0.0


def _constraint_label(request: ChatRequest) -> str | None:
    c = request.constraint
    if c is None:
        return None
    # a hash, not the constraint: a grammar runs to kilobytes a call, and equal ones must compare equal
    body = c.grammar if c.kind == "grammar" else repr(sorted((c.json_schema or {}).items()))
    return f"{c.kind}:{hashlib.sha256((body or '').encode()).hexdigest()[:12]}"


def _needed_features(strategies: list[Strategy], mode: ToolMode, has_tools: bool) -> set[Feature]:
    needed: set[Feature] = {"native_tools"} if mode == "native" and has_tools else set()
    for strategy in strategies:
        needed |= strategy.requires(mode)
    return needed


def missing_features(backend: Backend, strategies: list[Strategy], mode: ToolMode, has_tools: bool) -> list[str]:
    return sorted(f for f in _needed_features(strategies, mode, has_tools) if not backend.supports(f))


class _Run:
    def __init__(
        self,
        scenario: Scenario,
        strategies: list[Strategy],
        backend: Backend,
        mode: ToolMode,
        sampling: Sampling,
        run_id: str,
        seed: int,
        policy: RetryPolicy,
    ):
        self.scenario, self.strategies, self.backend = scenario, strategies, backend
        self.mode, self.sampling, self.run_id, self.seed, self.policy = mode, sampling, run_id, seed, policy
        self.state = RunState()
        first = [Message(role="system", content=scenario.system)] if scenario.system else []
        self.view = TurnView(
            messages=first,
            tools=[t.spec() for t in scenario.tools],
            mode=mode,
            supports=backend.supports,
            mutating_tools=frozenset(t.name for t in scenario.tools if t.mutating),
            terminal_tool=scenario.terminal_tool,
            required_tools=tuple(c.name for c in scenario.check.calls.required) if scenario.check.calls else (),
        )
        self.rng = random.Random(seed)  # backoff jitter only
        self.turn = 0
        self.mocks = StatefulMocks(scenario) if scenario.state else None  # one set of instances per run

    def intervene(self, strategy: str, action: str, reason: str) -> None:
        self.state.interventions.append(
            Intervention(strategy=strategy, action=action, reason=reason, call_index=len(self.state.calls))
        )

    def flush_notes(self, action: str) -> None:
        """Record what strategies noted through `view.note` while preparing or judging."""
        for name, text in self.view.notes:
            self.intervene(name, action, text)
        self.view.notes.clear()

    def build_request(self) -> tuple[ChatRequest, ChatRequest]:
        request = ChatRequest(messages=list(self.view.messages), tools=list(self.view.tools), sampling=self.sampling)
        for strategy in self.strategies:
            request = strategy.prepare(request, self.view)
        # what the model was offered after the guards' choices: judging a call reads this, not the scenario's
        self.view.offered = list(request.tools)
        self.flush_notes("prepare")
        wire = apply_prompt_mode(request) if self.mode == "prompt" else request
        return request, wire

    async def call_model(self, offered: ChatRequest, wire: ChatRequest) -> tuple[Completion, int]:
        context = CallContext(
            run_id=self.run_id,
            seed=self.seed,
            call_index=len(self.state.calls),
            mode=self.mode,
            family=self.scenario.family,
            offered_tools=offered.tools,
            skill=self.scenario.skill(),
        )
        completion, retries = await call_with_retries(
            lambda: self.backend.complete(wire, context), self.policy, rng=self.rng
        )
        # prompt mode: the server saw no tools, so its calls are whatever the text spells strictly
        if self.mode == "prompt":
            completion = completion.model_copy(update={"tool_calls": parse_strict_calls(completion.text)})
        return completion, retries

    def judge(self, reply: Completion) -> tuple[Completion, Decision]:
        for strategy in self.strategies:
            decision = strategy.judge(reply, self.view)
            # a rewrite hands the next guard a changed reply; any other decision ends the stack
            if isinstance(decision, Rewrite):
                self.intervene(strategy.name, "rescue", decision.note)
                reply = decision.reply
            elif decision is not None:
                self.record_decision(strategy.name, decision)
                return reply, decision
        if reply.tool_calls:
            return reply, Execute(reply.tool_calls)
        return reply, Accept(reply.text)

    def record_decision(self, name: str, decision: Decision) -> None:
        if isinstance(decision, Retry):
            self.intervene(name, "retry", decision.reason)
        elif isinstance(decision, Stop):
            self.intervene(name, "stop", decision.reason)
        elif isinstance(decision, Execute) and decision.note:
            self.intervene(name, "rescue" if decision.rescued else "strip", decision.note)
        elif isinstance(decision, Accept) and decision.note:
            self.intervene(name, "accept", decision.note)

    def with_ids(self, calls: list[ToolCall]) -> list[ToolCall]:
        # ids unique within the run: a tool result must name the call it answers, and some models send none
        index = len(self.state.calls)
        return [c if c.id else c.model_copy(update={"id": f"call_{index}_{i}"}) for i, c in enumerate(calls)]

    def execute(self, reply: Completion, calls: list[ToolCall]) -> bool:
        """Run the calls; True when the terminal tool was reached."""
        calls = self.with_ids(calls)
        self.view.messages.append(Message(role="assistant", content=reply.text, tool_calls=calls, origin="model"))
        terminal = False
        batch = []
        for call in calls:
            done = dataclasses.replace(execute_call(self.scenario, call, self.mocks), turn=self.turn)
            batch.append(done)
            self.view.messages.append(
                Message(role="tool", content=result_text(done), tool_call_id=call.id, name=call.name, origin="mock")
            )
            # a malformed or unknown call to the terminal tool does not end the run: it did not happen
            valid = done.known_tool and not call.malformed
            terminal = terminal or (valid and call.name == self.scenario.terminal_tool)
        self.view.executed.extend(batch)
        for strategy in self.strategies:
            after_execute = getattr(strategy, "after_execute", None)  # optional: plugins may lack it
            if after_execute is not None:
                after_execute(batch, self.view)
        return terminal

    def reject(self, reply: Completion, decision: Retry) -> None:
        """Append the rejected reply and the correction, on the channel the decision names."""
        # a correction on the tool channel answers each call, as a chat template requires of a call
        if decision.role == "tool" and reply.tool_calls:
            calls = self.with_ids(reply.tool_calls)
            self.view.messages.append(Message(role="assistant", content=reply.text, tool_calls=calls, origin="model"))
            for call in calls:
                self.view.messages.append(
                    Message(role="tool", content=decision.message, tool_call_id=call.id, name=call.name, origin="guard")
                )
            return
        # the rejected calls as text: an assistant message with calls but no tool answers is invalid
        shown = reply.text or _calls_as_text(reply.tool_calls)
        self.view.messages.append(Message(role="assistant", content=shown, origin="model"))
        self.view.messages.append(Message(role="user", content=decision.message, origin="guard"))

    def apply(self, reply: Completion, decision: Decision) -> str:
        """Carry out a decision; returns 'next' (call again), 'turn_done' or 'run_done'."""
        if isinstance(decision, Execute):
            if self.execute(reply, decision.calls) or self.scenario.end_after_calls:
                self.state.outcome = "terminal_tool"
                return "run_done"
            return "next"
        if isinstance(decision, Accept):
            self.view.messages.append(Message(role="assistant", content=decision.text, origin="model"))
            self.state.reply = decision.text
            self.state.turn_replies[self.turn] = decision.text
            return "turn_done"
        if isinstance(decision, Retry):
            self.state.retries += 1
            self.reject(reply, decision)
            return "next"
        assert isinstance(decision, Stop)
        self.state.outcome = decision.outcome
        return "run_done"

    async def step(self) -> str:
        offered, wire = self.build_request()
        try:
            reply, backend_retries = await self.call_model(offered, wire)
        except UnsupportedFeature as exc:
            self.state.outcome, self.state.error = "unsupported", str(exc)
            return "run_done"
        except BackendUnusable:
            raise  # the run stops: every run would end as this one
        except BackendError as exc:
            self.state.outcome, self.state.error = "infra_error", str(exc)
            return "run_done"
        self.state.usage = Usage(
            prompt_tokens=self.state.usage.prompt_tokens + reply.usage.prompt_tokens,
            completion_tokens=self.state.usage.completion_tokens + reply.usage.completion_tokens,
        )
        self.state.latency_s += reply.latency_s
        # the record keeps the model's own reply; a guard's rewrite shows in the interventions
        raw_reply = reply
        reply, decision = self.judge(reply)
        self.flush_notes("judge")
        self.state.calls.append(
            ModelCall(
                index=len(self.state.calls),
                n_messages=len(wire.messages),
                tools=[t.name for t in offered.tools],
                tool_choice=offered.tool_choice,
                constraint=_constraint_label(wire),
                completion=raw_reply,
                decision=type(decision).__name__.lower(),
                backend_retries=backend_retries,
                system_sent=self._system_sent(offered, wire),
            )
        )
        return self.apply(reply, decision)

    def _system_sent(self, offered: ChatRequest, wire: ChatRequest) -> str | None:
        """The wire's system message if the transcript does not show it and no earlier call recorded it."""
        sent = wire.messages[0].content if wire.messages and wire.messages[0].role == "system" else None
        shown = offered.messages[0].content if offered.messages and offered.messages[0].role == "system" else None
        earlier = next((c.system_sent for c in reversed(self.state.calls) if c.system_sent is not None), shown)
        return sent if sent is not None and sent != earlier else None

    async def run(self) -> RunState:
        started = time.perf_counter()
        self.state.turn_replies = [None] * len(self.scenario.turns)
        for turn in range(len(self.scenario.turns)):
            self.turn = turn
            self.view.tools = [t.spec() for t in self.scenario.tools_at(turn)]
            self.view.messages.append(Message(role="user", content=self.scenario.user_text(self.turn)))
            status = "next"
            while status == "next":
                # the budget is the run's, over every turn: a long first turn leaves less for the next
                if len(self.state.calls) >= self.scenario.max_iterations:
                    self.state.outcome, status = "iteration_limit", "run_done"
                    break
                status = await self.step()
            if status == "run_done":
                break
        self.state.wall_s = time.perf_counter() - started
        return self.state


def _calls_as_text(calls: list[ToolCall]) -> str:
    return "; ".join(f"{c.name}({c.raw_arguments or c.arguments})" for c in calls)


async def run_loop(
    scenario: Scenario,
    strategies: list[Strategy],
    backend: Backend,
    *,
    mode: ToolMode,
    sampling: Sampling,
    run_id: str,
    seed: int,
    policy: RetryPolicy,
) -> tuple[RunState, TurnView]:
    """Drive one run to its end; returns what happened and the final view (messages, executed calls)."""
    run = _Run(scenario, strategies, backend, mode, sampling, run_id, seed, policy)
    missing = missing_features(backend, strategies, mode, bool(scenario.tools))
    if missing:
        run.state.outcome = "unsupported"
        run.state.error = f"{backend.kind} ({backend.model}) lacks {', '.join(missing)} needed for this cell"
        return run.state, run.view
    state = await run.run()
    return state, run.view
