"""Two releases of an agent under one config (issue 37, item 7): the agent entry's `venv` names an
environment variable (`../.agents/pydantic-ai-${PYDANTIC_AI_VERSION:-2.68.0}`), the results header
records the release that ran (name, version, install hash), and a resume under another release is
refused in one line (exit 2), the file left as it was, as for Forge's releases
(tests/run/test_resume_phases.py). The agent is the standard-library fake agent behind a venv's
`bin/python`, so no PyPI install is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.agents.pydantic_ai import PydanticAiAgent
from evalkit.cli.run_cmd import add_arguments, config_variables, resume_command
from evalkit.errors import ConfigError
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.config_diff import agent_changes
from tests.agents.conftest import FAKE, ROOT

HI = ROOT / "scenarios/casual_greeting/hi.yaml"


def _release(agents: Path, version: str, install_hash: str) -> None:
    """`.agents/pydantic-ai-VERSION` as scripts/install-agents.sh leaves it, its Python the fake agent."""
    venv = agents / f"pydantic-ai-{version}"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" loop\n')
    python.chmod(0o755)
    record = {"name": "pydantic-ai", "package": "pydantic-ai-slim", "version": version, "install_hash": install_hash}
    (venv / "evalkit-agent.json").write_text(json.dumps(record))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    _release(tmp_path / ".agents", "2.60.0", "a" * 16)
    _release(tmp_path / ".agents", "2.68.0", "b" * 16)
    path = tmp_path / "gate.yaml"
    path.write_text(
        f"name: agent-gate-test\nseed: 7\nruns: 1\nscenarios: [{HI}]\n"
        "backends:\n  - {label: sim, kind: sim, model: small-local, concurrency: 2}\n"
        "agents:\n  pydantic-ai: {agent: pydantic-ai, budget: 5, time_limit_s: 60,\n"
        "    options: {venv: '.agents/pydantic-ai-${PYDANTIC_AI_VERSION:-2.68.0}'}}\n",
        encoding="utf-8",
    )
    return path


def _evalkit(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PYDANTIC_AI_VERSION"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=ROOT,
        timeout=300,
    )


def test_the_venv_option_reads_the_release_from_the_environment(tmp_path: Path) -> None:
    os.environ.pop("PYDANTIC_AI_VERSION", None)
    options = {"venv": "../.agents/pydantic-ai-${PYDANTIC_AI_VERSION:-2.68.0}"}
    assert PydanticAiAgent(options, tmp_path).venv == tmp_path / "../.agents/pydantic-ai-2.68.0"
    with pytest.raises(ConfigError, match=r"^options\.venv: environment variable PYDANTIC_AI_VERSION='\.\./x'"):
        os.environ["PYDANTIC_AI_VERSION"] = "../x"
        try:
            PydanticAiAgent(options, tmp_path)
        finally:
            del os.environ["PYDANTIC_AI_VERSION"]


def test_the_header_records_the_release_and_a_resume_under_another_is_refused(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "gate.jsonl"
    first = _evalkit("run", config, "-o", out, PYDANTIC_AI_VERSION="2.60.0")
    assert first.returncode == 0, first.stderr
    (header,) = load_results([out]).headers
    assert header.agents["pydantic-ai"] == {
        "name": "pydantic-ai",
        "package": "pydantic-ai-slim",
        "version": "2.60.0",
        "install_hash": "a" * 16,
    }
    before = out.read_bytes()
    mixed = _evalkit("run", config, "-o", out, "--resume", "-n", "2")  # the default: 2.68.0
    assert mixed.returncode == 2
    assert (
        mixed.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "agent 'pydantic-ai': pydantic-ai 2.60.0 in the runs already in the file, pydantic-ai 2.68.0 now; "
            "resuming would mix them in one column: resume with the same install, or write a new file (-o)"
        )
    )
    assert out.read_bytes() == before
    same = _evalkit("run", config, "-o", out, "--resume", "-n", "2", PYDANTIC_AI_VERSION="2.60.0")
    assert same.returncode == 0, same.stderr
    assert len(load_results([out]).runs) == 2


def test_another_install_of_the_same_release_is_a_change() -> None:
    info = {"name": "pydantic-ai", "version": "2.68.0", "install_hash": "a" * 16}
    assert agent_changes({"p": info}, {"p": dict(info)}) == []
    assert agent_changes({"p": info}, {"q": dict(info)}) == []  # another column: new cells
    assert agent_changes({"p": info}, {"p": {**info, "install_hash": "b" * 16}}) == [
        f"agent 'p': pydantic-ai 2.68.0 with another install (install_hash {'a' * 16} in the runs already in "
        f"the file, {'b' * 16} now)"
    ]


def test_the_resume_hint_repeats_the_agent_release(config: Path) -> None:
    import argparse

    loaded = load_config(config)
    assert config_variables(loaded, {"PYDANTIC_AI_VERSION": "2.60.0", "HOME": "/x"}) == {
        "PYDANTIC_AI_VERSION": "2.60.0"
    }
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([str(config), "-o", "g.jsonl"])
    hint = resume_command(args, Path("g.jsonl"), config_variables(loaded, {"PYDANTIC_AI_VERSION": "2.60.0"}))
    assert hint == f"PYDANTIC_AI_VERSION=2.60.0 evalkit run {config} --resume -o g.jsonl"
