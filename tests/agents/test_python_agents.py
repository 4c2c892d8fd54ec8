"""pydantic-ai and the OpenAI Agents SDK, unchanged in their own venvs, run by evalkit on the simulated
model. A test skips when its agent is not installed, and names the command that installs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.agents.conftest import ROOT

AGENTS = {"pydantic-ai": "2.68.0", "openai-agents": "0.24.0"}


def _venv(name: str) -> Path:
    venv = ROOT / ".agents" / name
    if not (venv / "evalkit-agent.json").is_file():
        pytest.skip(f"{name} is not installed: bash scripts/install-agents.sh {name}")
    return venv


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_the_agent_runs_the_scenarios_through_evalkits_model_url_and_mcp_tools(name: str, tmp_path: Path) -> None:
    venv = _venv(name)
    scenarios = "\n".join(
        f"  - {ROOT / s}"
        for s in ("scenarios/casual_greeting/hi.yaml", "scenarios/sequential_reasoning/medication_chain.yaml")
    )
    config = tmp_path / "agents.yaml"
    config.write_text(
        f"name: python-agents\nseed: 5\nruns: 2\nscenarios:\n{scenarios}\n"
        "backends:\n  - {label: sim, kind: sim, model: strong, concurrency: 2}\n"
        f"agents:\n  {name}: {{agent: {name}, budget: 12, time_limit_s: 120, options: {{venv: {venv}}}}}\n"
    )
    output = run_config(load_config(config), tmp_path / "out.jsonl")
    results = load_results([output])
    assert results.headers[0].agents[name]["version"] == AGENTS[name]
    assert len(results.headers[0].agents[name]["install_hash"]) == 16
    runs = {(r.cell.scenario, r.index): r for r in results.runs}
    for (scenario, _), run in runs.items():
        assert run.outcome != "infra_error", run.error
        assert run.served is not None and run.served.calls == run.model_calls >= 1
        if scenario == "greet-hi":
            assert run.correct and run.model_calls == 1
    chains = [r for (s, _), r in runs.items() if s == "seq-medication-chain"]
    assert any(r.correct and r.outcome == "terminal_tool" for r in chains), [r.failure for r in chains]
    # every tool call the model was served before its last answer came back to it as a tool result
    for run in chains:
        asked = sum(len(m.completion.tool_calls) for m in run.calls[:-1])
        assert sum(m.role == "tool" for m in run.messages) == asked, run.run_id


def test_an_agent_that_is_not_installed_is_one_line_naming_the_install_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.cli import main

    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: x\nscenarios: [{ROOT / 'scenarios/casual_greeting/hi.yaml'}]\n"
        "backends:\n  - {label: sim, kind: sim, model: small-local}\n"
        "agents:\n  p: {agent: pydantic-ai, options: {venv: nowhere}}\n"
    )
    assert main(["run", str(config), "-o", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert "agents.p: pydantic-ai is not installed in " in err and err.endswith(
        ": bash scripts/install-agents.sh pydantic-ai"
    )
    assert len(err.splitlines()) == 1
