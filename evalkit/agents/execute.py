"""One run through an agent: start it with its run's URLs, stop it, and score what was observed.

The record is built only from what evalkit saw: the calls the model front served under the run's URL
(the transcript and the counts), the tool calls the MCP server ran (what the check judges), and the
agent's final reply as the agent printed it. The scenario's own check (`evalkit.judge.verdict`)
decides the run. How it ended:

- it asked for a model call a replay has no answer to: `infra_error` (never counted, never `runaway`);
- it asked for a model call past its budget: `runaway`, with the served count (`served.calls`);
- it could not start, or crashed without a reply: `infra_error`, in one line;
- it outran its time limit: `time_limit` (a verdict on the agent) when no model call was in flight, else
  `infra_error` (it was waiting on the model server, whose time is not the agent's doing);
- it said it gave up (its retry or turn limit: `ReportsEnd`): `failed` or `iteration_limit`;
- a valid call of the scenario's terminal tool: `terminal_tool`; else its reply: `final_answer`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from evalkit.agents.base import MCP_SERVER_NAME, Agent, AgentRun, HasPlaceholders, ReportsEnd
from evalkit.agents.entry import AgentEntry
from evalkit.agents.process import AgentProcess, ProcessResult
from evalkit.agents.serving import AgentServices, RunWatch
from evalkit.agents.tools_mcp import RunTools
from evalkit.backends.run_url import RunToken
from evalkit.chat import Message, Sampling, Usage, with_placeholders
from evalkit.judge.verdict import judge_run
from evalkit.results.records import Cell, ModelCall, Outcome, RunRecord, Served
from evalkit.scenario.model import Scenario

__all__ = ["DUMMY_KEY", "AgentSpec", "execute_agent_run", "placeholders"]

DUMMY_KEY = "evalkit-no-key"  # the agent must send some key; it is never a real one
# what an agent inherits from evalkit's environment: nothing that could be a credential
_INHERITED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SYSTEMROOT")


class AgentSpec:
    """A planned run's facts as the agent runner needs them."""

    def __init__(
        self, run_id: str, cell: Cell, index: int, seed: int, scenario: Scenario, label: str, scenario_hash: str
    ):
        self.run_id, self.cell, self.index, self.seed = run_id, cell, index, seed
        self.scenario, self.label, self.scenario_hash = scenario, label, scenario_hash


def _environment(agent: Agent, run: AgentRun) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _INHERITED}
    env.update(agent.environment(run))
    env.update(HOME=str(run.home), PWD=str(run.workdir), TMPDIR=str(run.home / "tmp"))
    return env


async def execute_agent_run(
    spec: AgentSpec, agent: Agent, entry: AgentEntry, services: AgentServices, model: str, simulated: bool
) -> RunRecord:
    token = RunToken(spec.scenario.id, spec.seed, spec.run_id)
    with tempfile.TemporaryDirectory(prefix="evalkit-agent-") as tmp:
        home, workdir = Path(tmp, "home"), Path(tmp, "work")
        for folder in (home, home / "tmp", workdir):
            folder.mkdir()
        run = AgentRun(
            model_base_url=services.model_url(spec.label, token),
            api_key=DUMMY_KEY,
            model=model,
            mcp_url=services.mcp_url(token),
            mcp_server_name=MCP_SERVER_NAME,
            prompt=spec.scenario.user_text(0),
            home=home,
            workdir=workdir,
            time_limit_s=entry.time_limit_s,
            system=spec.scenario.system,
            run_id=spec.run_id,
            options=dict(entry.options),
        )
        marks = placeholders(agent, run, Path(tmp))
        async with services.open_run(spec.label, token, spec.scenario, entry.budget, marks) as (watch, tools):
            process = AgentProcess(agent.command(run), _environment(agent, run), workdir, grace_s=entry.grace_s)
            result = await process.run(entry.time_limit_s, watch.stop, watch.time_limit_passed)
    record = _record(spec, agent, result, watch, tools, simulated)
    return RunRecord.model_validate(with_placeholders(record.model_dump(mode="json"), marks))


def placeholders(agent: Agent, run: AgentRun, folder: Path) -> dict[str, str]:
    """The run's temporary folders (and what the agent says varies by day) -> fixed placeholders, in
    everything recorded: a run's transcript is the same from run to run and machine to machine."""
    marks = {str(run.workdir): "{workdir}", str(run.home): "{home}", str(folder): "{run_folder}"}
    real = Path(os.path.realpath(folder))  # a /tmp reached through a symlink is said in both forms
    if real != folder:
        marks |= {str(real / "work"): "{workdir}", str(real / "home"): "{home}", str(real): "{run_folder}"}
    return marks | (agent.placeholders(run) if isinstance(agent, HasPlaceholders) else {})


def _ending(
    name: str, agent: Agent, result: ProcessResult, watch: RunWatch, tools: RunTools
) -> tuple[Outcome, str | None]:
    if watch.miss is not None:
        return "infra_error", f"agent {name}: {watch.miss}"
    if watch.over.is_set():
        return "runaway", f"asked for more than its budget of {watch.budget} served model calls"
    if result.stopped == "start_failed":
        return "infra_error", f"agent {name}: {result.error}"
    if result.stopped == "time_limit" and watch.model_busy_at_limit:
        return "infra_error", f"agent {name}: a model call was still unanswered at its time limit (SIGINT, then killed)"
    if result.stopped == "time_limit":
        return (
            "time_limit",
            f"agent {name}: no end within its time limit, no model call in flight (SIGINT, then killed)",
        )
    scenario = tools.scenario
    valid = [c for c in tools.executed if c.known_tool and not c.call.malformed]
    if any(c.call.name == scenario.terminal_tool for c in valid) or (scenario.end_after_calls and valid):
        return "terminal_tool", None
    end = agent.ended(result.stdout) if isinstance(agent, ReportsEnd) else None
    if end is not None:
        return end.outcome, end.reason
    if result.returncode != 0 and agent.final_reply(result.stdout) is None:
        return "infra_error", f"agent {name} exited with status {result.returncode}: {result.last_stderr_line()}"
    return "final_answer", None


def _calls(watch: RunWatch) -> list[ModelCall]:
    return [
        ModelCall(
            index=i,
            n_messages=len(call.request.messages),
            tools=[t.name for t in call.request.tools],
            tool_choice=call.request.tool_choice,
            constraint=None,
            completion=completion,
            decision="execute" if completion.tool_calls else "accept",
        )
        for i, (call, completion) in enumerate(watch.served)
    ]


def _transcript(watch: RunWatch) -> list[Message]:
    """The served conversation: the last request the model answered, and its answer."""
    if not watch.served:
        return []
    call, completion = watch.served[-1]
    answer = Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls, origin="model")
    return [*call.request.messages, answer]


def _record(
    spec: AgentSpec, agent: Agent, result: ProcessResult, watch: RunWatch, tools: RunTools, simulated: bool
) -> RunRecord:
    outcome, error = _ending(spec.cell.strategy, agent, result, watch, tools)  # the column: the agent's label
    reply = agent.final_reply(result.stdout) if result.stopped == "exited" else None
    verdict = judge_run(spec.scenario, outcome, tools.executed, reply, turn_replies=[reply])
    completions = [c for _, c in watch.served]
    usage = Usage(
        prompt_tokens=sum(c.usage.prompt_tokens for c in completions),
        completion_tokens=sum(c.usage.completion_tokens for c in completions),
    )
    calls = len(completions)
    ideal = spec.scenario.ideal_iterations
    return RunRecord(
        run_id=spec.run_id,
        cell=spec.cell,
        index=spec.index,
        seed=spec.seed,
        simulated=simulated,
        outcome=outcome,
        completed=verdict.completed,
        correct=verdict.correct,
        failure=verdict.failure,
        first_try=verdict.correct,
        retries=0,
        guard_fires=0,
        model_calls=calls,
        iterations=calls,
        ideal_iterations=ideal,
        wasted_calls=max(0, calls - ideal),
        usage=usage,
        latency_s=sum(c.latency_s for c in completions),
        wall_s=result.wall_s,
        sampling=Sampling(seed=spec.seed),
        error=error,
        scenario_hash=spec.scenario_hash,
        served=Served(
            calls=calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_s=sum(c.latency_s for c in completions),
        ),
        check=verdict.items,
        calls=_calls(watch),
        messages=_transcript(watch),
    )
