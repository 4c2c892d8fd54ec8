"""An agent under test, run once per run: how each way of ending is recorded, and what is kept.

The agent is tests/agents/fake_agent.py (standard library only), a `command:` agent: a real program
in its own process, speaking HTTP to the run's model URL and MCP server, as Cline or pydantic-ai do.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.agents.conftest import FAKE, ROOT, MakeConfig


def _run(config: Path, output: Path, **options: object) -> list:  # type: ignore[type-arg]
    run_config(load_config(config), output, **options)  # type: ignore[arg-type]
    return list(load_results([output]).runs)


def test_an_agent_past_its_budget_is_ended_and_recorded_as_runaway_with_its_count(
    agent_config: MakeConfig, tmp_path: Path
) -> None:
    config = agent_config("flood", extra=", budget: 5, time_limit_s: 60")
    runs = _run(config, tmp_path / "out.jsonl")
    assert len(runs) == 4
    for run in runs:
        assert run.outcome == "runaway" and run.failure == "runaway" and not run.correct, run.error
        assert run.served is not None and run.served.calls == 5 == run.model_calls == len(run.calls)
        assert "budget of 5" in (run.error or "")
        assert run.counted  # a verdict on the agent: in the rate's denominator


def test_an_agent_that_crashes_is_an_infra_error_said_in_one_line(agent_config: MakeConfig, tmp_path: Path) -> None:
    runs = _run(agent_config("crash"), tmp_path / "out.jsonl")
    for run in runs:
        assert run.outcome == "infra_error" and not run.counted
        assert run.error == "agent fake exited with status 3: fake agent: the model client failed to load"


def test_an_agent_whose_script_is_missing_is_an_infra_error(agent_config: MakeConfig, tmp_path: Path) -> None:
    config = agent_config("loop")
    text = config.read_text().replace(str(Path(__file__).with_name("fake_agent.py")), "/nonexistent/agent.py")
    config.write_text(text)
    runs = _run(config, tmp_path / "out.jsonl")
    assert {r.outcome for r in runs} == {"infra_error"}
    assert all("exited with status 2" in (r.error or "") for r in runs)  # python: no such file


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().rpartition(")")[2].split()[0] == "Z")


def test_a_hanging_agent_gets_sigint_then_its_whole_tree_is_killed(agent_config: MakeConfig, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    config = agent_config(
        "hang", str(pidfile), scenarios=["scenarios/casual_greeting/hi.yaml"], extra=", time_limit_s: 2, grace_s: 0.5"
    )
    (run,) = _run(config, tmp_path / "out.jsonl")
    # stuck on its own (no model call in flight): a verdict on the agent, counted
    assert (run.outcome, run.failure, run.counted, run.correct) == ("time_limit", "time_limit", True, False)
    assert "no end within its time limit, no model call in flight" in (run.error or "")
    agent, child = map(int, pidfile.read_text().split())
    for _ in range(50):  # the child, in a session of its own, is killed too (reaped by init, not us)
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(agent) and not _alive(child)


def test_an_agent_waiting_on_the_model_at_its_time_limit_is_an_infra_error(tmp_path: Path) -> None:
    # a model server that takes the connection and never answers: the wait is the model's, not the agent's
    with socket.create_server(("127.0.0.1", 0)) as silent:
        config = tmp_path / "slow.yaml"
        config.write_text(
            f"name: slow\nseed: 1\nruns: 1\nscenarios: [{ROOT / 'scenarios/casual_greeting/hi.yaml'}]\n"
            f"backends:\n  - {{label: slow, kind: openai, model: m, url: 'http://127.0.0.1:{silent.getsockname()[1]}/v1',"
            " timeout_s: 5}\n"  # describe() waits this long on its /models probe
            f"agents:\n  fake: {{command: [{sys.executable}, {FAKE}, loop], time_limit_s: 2, grace_s: 0.5}}\n",
            encoding="utf-8",
        )
        (run,) = _run(config, tmp_path / "out.jsonl")
    assert (run.outcome, run.counted) == ("infra_error", False)
    assert "a model call was still unanswered at its time limit" in (run.error or "")


def test_an_agent_is_scored_from_what_was_observed(agent_config: MakeConfig, tmp_path: Path) -> None:
    runs = _run(agent_config("loop", model="strong"), tmp_path / "out.jsonl")
    by_scenario = {r.cell.scenario: r for r in runs}
    chain = by_scenario["seq-medication-chain"]
    assert chain.outcome == "terminal_tool" and chain.correct
    assert chain.served is not None and chain.served.calls == chain.model_calls == len(chain.calls)
    # the transcript is the served conversation: the last request the model answered, and its answer
    assert chain.messages[0].role == "system" and chain.messages[1].content.startswith("Check patient P-100")
    assert [m.role for m in chain.messages].count("tool") == sum(len(c.completion.tool_calls) for c in chain.calls)
    greeting = by_scenario["greet-hi"]
    assert greeting.outcome == "final_answer" and greeting.correct and greeting.model_calls == 1


def test_an_agent_gets_the_same_draws_as_evalkits_own_loop(agent_config: MakeConfig, tmp_path: Path) -> None:
    """The run's URL seeds the simulated model as the run, and MCP gives the loop's tool results, so the
    agent (which sends no seed) makes the calls evalkit's loop makes under trust_text, run for run. An
    agent goes on after the terminal tool (one more model call), the loop stops there."""
    config = agent_config("loop", runs=6, strategies="strategies:\n  trust_text: [trust_text]\n")
    runs = _run(config, tmp_path / "out.jsonl")
    by_key = {(r.cell.strategy, r.cell.scenario, r.index): r for r in runs}
    assert len(by_key) == 48
    for (strategy, scenario, index), run in by_key.items():
        if strategy != "fake":
            continue
        loop = by_key[("trust_text", scenario, index)]
        calls = [(c.name, c.arguments) for m in run.calls for c in m.completion.tool_calls]
        expected = [(c.name, c.arguments) for m in loop.calls for c in m.completion.tool_calls]
        assert calls[: len(expected)] == expected, run.run_id
        if calls == expected:  # nothing more after the terminal tool: the same verdict
            assert (run.correct, run.failure) == (loop.correct, loop.failure), run.run_id
        else:
            assert loop.outcome == "terminal_tool", run.run_id


def test_a_resume_runs_only_what_is_missing_and_replay_gives_the_same_runs(
    agent_config: MakeConfig, tmp_path: Path
) -> None:
    config = load_config(agent_config("loop", runs=2))
    output, recordings = tmp_path / "out.jsonl", tmp_path / "rec"
    run_config(config, output, record_dir=recordings)
    first = {r.run_id: r for r in load_results([output]).runs}
    run_config(config, output, resume=True, record_dir=recordings)
    assert len(load_results([output]).runs) == len(first) == 8  # nothing ran again
    replayed = run_config(config.as_replay(recordings), tmp_path / "replay.jsonl")
    again = {r.run_id: r for r in load_results([replayed]).runs}
    assert {k: (r.outcome, r.correct, r.model_calls) for k, r in again.items()} == {
        k: (r.outcome, r.correct, r.model_calls) for k, r in first.items()
    }


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ("  x: {agent: no-such-agent}\n", "agents.x.agent: unknown agent 'no-such-agent' (known: "),
        ("  x: {agent: pydantic-ai, budget: 0}\n", "agents.x.budget: "),
        ("  x: {command: [NOTEXEC]}\n", "agents.x: command "),
    ],
)
def test_bad_agent_input_is_one_line_and_exit_2(
    agents: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main
    from tests.agents.conftest import ADR013, ROOT

    plain = tmp_path / "agent.sh"
    plain.write_text("#!/bin/sh\necho hi\n")  # not executable
    paths = "\n".join(f"  - {ROOT / s}" for s in ADR013)
    config = tmp_path / "bad.yaml"
    config.write_text(
        f"name: bad\nscenarios:\n{paths}\nbackends:\n  - {{label: sim, kind: sim, model: small-local}}\n"
        f"agents:\n{agents.replace('NOTEXEC', str(plain))}"
    )
    assert main(["run", str(config), "-o", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "not an executable" in err if "command" in message else message in err
    assert len(err.splitlines()) == 1, err
    assert not (tmp_path / "out.jsonl").exists()


def test_stopping_evalkit_stops_every_agent_process_and_resume_finishes(
    agent_config: MakeConfig, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys

    pidfile = tmp_path / "pids"
    config = agent_config("hang", str(pidfile), scenarios=["scenarios/casual_greeting/hi.yaml"])
    output = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(output)]
    evalkit = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text().endswith("\n"):
                break
            time.sleep(0.1)
        evalkit.send_signal(signal.SIGINT)
        _, err = evalkit.communicate(timeout=60)
    finally:
        evalkit.kill()
    assert evalkit.returncode == 130, err
    agent, child = map(int, pidfile.read_text().split())
    for _ in range(50):
        if not (_alive(agent) or _alive(child)):
            break
        time.sleep(0.1)
    assert not _alive(agent) and not _alive(child)
    done = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (run,) = load_results([output]).runs
    assert run.outcome == "final_answer" and run.correct


def test_a_program_that_cannot_be_started_is_said_in_one_line(tmp_path: Path) -> None:
    import asyncio

    from evalkit.agents.process import AgentProcess

    result = asyncio.run(AgentProcess([str(tmp_path / "gone")], {}, tmp_path, grace_s=0).run(5, asyncio.Event()))
    assert result.stopped == "start_failed" and result.returncode is None
    assert result.error == f"cannot start {tmp_path / 'gone'}: No such file or directory"


def test_rescore_copies_an_agents_runs_it_cannot_rerun(agent_config: MakeConfig, tmp_path: Path) -> None:
    from evalkit.cli import main

    config = agent_config(
        "loop", scenarios=["scenarios/casual_greeting/hi.yaml"], strategies="strategies:\n  t: [trust_text]\n"
    )
    output = tmp_path / "out.jsonl"
    runs = _run(config, output)
    assert main(["rescore", str(output), "-o", str(tmp_path / "again.jsonl")]) == 0
    again = {r.run_id: r for r in load_results([tmp_path / "again.jsonl"]).runs}
    assert {r.run_id: r for r in runs} == again


def test_an_agent_that_gives_up_by_its_own_rules_is_a_verdict_not_an_infra_error(
    agent_config: MakeConfig, tmp_path: Path
) -> None:
    (run,) = _run(agent_config("giveup", scenarios=["scenarios/casual_greeting/hi.yaml"]), tmp_path / "out.jsonl")
    assert run.outcome == "failed" and run.counted and not run.correct
    assert run.error == "UnexpectedModelBehavior: retries spent" and run.model_calls == 1


def test_the_run_s_temporary_folders_are_recorded_as_placeholders(agent_config: MakeConfig, tmp_path: Path) -> None:
    runs = _run(agent_config("here"), tmp_path / "out.jsonl")
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if '"type":"run"' in line and ("evalkit-agent-" in line or "/tmp/" in line)] == []
    for run in runs:
        system = run.messages[0].content
        assert system.endswith("\nWorking Directory: {workdir}\nHome: {home}"), system


def test_an_agent_whose_prompt_names_its_folders_is_replayed_call_for_call(
    agent_config: MakeConfig, tmp_path: Path
) -> None:
    config = load_config(agent_config("here", runs=2))
    recordings = tmp_path / "rec"
    first = {r.run_id: r for r in _run_config(config, tmp_path / "out.jsonl", record_dir=recordings)}
    recorded = (recordings / "sim" / "recordings.jsonl").read_text(encoding="utf-8")
    assert "evalkit-agent-" not in recorded and "{workdir}" in recorded
    again = {r.run_id: r for r in _run_config(config.as_replay(recordings), tmp_path / "replay.jsonl")}
    assert {k: (r.outcome, r.error, r.correct, r.model_calls, r.calls) for k, r in again.items()} == {
        k: (r.outcome, r.error, r.correct, r.model_calls, r.calls) for k, r in first.items()
    }


def test_a_replay_miss_is_an_infra_error_never_a_runaway(agent_config: MakeConfig, tmp_path: Path) -> None:
    recordings = tmp_path / "rec"
    run_config(load_config(agent_config("loop")), tmp_path / "out.jsonl", record_dir=recordings)
    # the flood agent sends another first request (no tools) and asks again after every refusal
    flood = load_config(agent_config("flood", extra=", budget: 5, time_limit_s: 60"))
    runs = _run_config(flood.as_replay(recordings), tmp_path / "replay.jsonl")
    assert len(runs) == 4
    for run in runs:
        assert run.outcome == "infra_error" and not run.counted, (run.outcome, run.error)
        assert (run.error or "").startswith("agent fake: replay "), run.error
        assert "run sim/native/fake/" in (run.error or "") and "\n" not in (run.error or "")
        assert run.served is not None and run.served.calls == 0


def _run_config(config, output: Path, **options: object) -> list:  # type: ignore[no-untyped-def, type-arg]
    run_config(config, output, **options)  # type: ignore[arg-type]
    return list(load_results([output]).runs)
