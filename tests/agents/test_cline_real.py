"""The real Cline CLI (scripts/install-cline.sh) against evalkit's simulated model and MCP server.

Skips where Cline is not installed, naming the install command; fails instead under CI, whose .ci/run
installs it. Each Cline process takes 5-20 s to start on two cores, so these are few and bounded:
the files Cline writes itself, held against the adapter's, and one greeting in each mode.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evalkit.agents.base import AgentRun
from evalkit.agents.cline import DEFAULT_VERSION, mcp_settings, provider_settings
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.agents.scripted_model import scripted_model

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / ".agents" / "cline" / DEFAULT_VERSION
GREETING = ROOT / "scenarios" / "casual_greeting" / "hi.yaml"
YOLO_NUDGE = "[SYSTEM] This run is not complete until you call one of these terminal completion tools: submit_and_exit"


@pytest.fixture(scope="module")
def cline() -> Path:
    """The installed Cline binary, or skip (fail under CI) naming the install command."""
    record = INSTALL / "install.json"
    reason = None
    if importlib.util.find_spec("mcp") is None:
        reason = "the scenario's tools over MCP need the `mcp` package: pip install -e '.[agents]'"
    elif not record.is_file():
        reason = f"Cline {DEFAULT_VERSION} is not installed: run `bash scripts/install-cline.sh`"
    if reason is not None:
        if os.environ.get("CI"):  # .ci/run installs both
            pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
        pytest.skip(reason)
    return INSTALL / json.loads(record.read_text())["binary"]


def _cline(binary: Path, home: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    subprocess.run([str(binary), *args], env=env, cwd=home, capture_output=True, check=True, timeout=120)


def test_the_settings_files_are_the_ones_cline_writes_itself(cline: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run = AgentRun(
        model_base_url="http://127.0.0.1:9/run/tok/v1",
        api_key="evalkit-no-key",
        model="small-local",
        mcp_url="http://127.0.0.1:9/mcp/tok",
        mcp_server_name="evalkit",
        prompt="hi",
        home=home,
        workdir=tmp_path,
        time_limit_s=60,
    )
    config = tmp_path / "config"
    _cline(
        cline, home, "auth", "-p", "openai-compatible", "-k", run.api_key, "-m", run.model, "-b", run.model_base_url,
        "--config", str(config), "--data-dir", str(config / "data"),
    )  # fmt: skip
    _cline(cline, home, "mcp", "add", "evalkit", "--transport", "streamableHttp", "--yes", run.mcp_url)
    theirs = json.loads((config / "data" / "settings" / "providers.json").read_text())
    ours = provider_settings(run)
    for written in (theirs, ours):  # the one field that is a time
        assert isinstance(written["providers"]["openai-compatible"].pop("updatedAt"), str)
    assert ours == theirs
    mcp = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"  # `mcp add` knows no --data-dir
    assert mcp_settings(run) == json.loads(mcp.read_text())


def _cline_processes() -> list[int]:
    """Cline processes that an agent run of evalkit started (their HOME is under a run's temp folder)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"/bin/cline") and any(b"evalkit-agent-" in a for a in argv):
            found.append(int(cmdline.parent.name))
    return found


def test_a_greeting_ends_in_one_call_in_act_mode_and_runs_away_in_yolo_mode(cline: Path, tmp_path: Path) -> None:
    """Issue 37 item 6: on "hi", with a model that answers in text, act mode takes the reply and ends;
    yolo mode sends its submit_and_exit nudge again after every text reply, without limit, until
    evalkit's served-call budget ends it: a `runaway` run with its count."""
    config = tmp_path / "cline.yaml"
    install = {"install_dir": str(INSTALL)}
    act, yolo = {**install, "retries": 3}, {**install, "retries": 3, "yolo": True}
    config.write_text(
        f"name: cline-greeting\nseed: 7\nruns: 1\nscenarios: [{GREETING}]\n"
        "backends:\n  - {label: sim, kind: sim, model: strong, concurrency: 2}\n"
        "agents:\n"
        f"  cline-act: {{agent: cline, budget: 8, time_limit_s: 120, options: {json.dumps(act)}}}\n"
        f"  cline-yolo: {{agent: cline, budget: 8, time_limit_s: 120, options: {json.dumps(yolo)}}}\n",
        encoding="utf-8",
    )
    output = tmp_path / "out.jsonl"
    run_config(load_config(config), output)
    results = load_results([output])
    runs = {r.cell.strategy: r for r in results.runs}

    answered = runs["cline-act"]
    assert (answered.outcome, answered.correct, answered.error) == ("final_answer", True, None)
    assert answered.served is not None and answered.served.calls == 1

    looped = runs["cline-yolo"]
    assert (looped.outcome, looped.failure, looped.correct) == ("runaway", "runaway", False)
    assert looped.served is not None and looped.served.calls == 8 == looped.model_calls
    assert "budget of 8 served model calls" in (looped.error or "")
    assert all(not call.completion.tool_calls for call in looped.calls)  # the model only ever answered in text
    nudges = [m for m in looped.messages if m.role == "user" and (m.content or "").startswith(YOLO_NUDGE)]
    assert len(nudges) == 8  # one before the first call, one after each of the 7 replies it was sent back

    described = results.headers[-1].agents["cline-yolo"]  # the results header names the release and the install
    assert (described["mode"], described["version"]) == ("yolo", DEFAULT_VERSION)
    assert described["install_hash"] == "sha256:" + json.loads((INSTALL / "install.json").read_text())["sha256"]
    assert _cline_processes() == []  # every Cline process ended with its run


def test_cline_runs_the_scenario_s_tools_through_evalkit_s_mcp_server(cline: Path, tmp_path: Path) -> None:
    """Cline lists the scenario's tools from evalkit's MCP server (streamable HTTP, stateless, JSON
    answers), offers them as `evalkit__<tool>`, and the call it makes is run by the scenario's mock."""
    scenario = ROOT / "scenarios" / "sequential_reasoning" / "medication_chain.yaml"
    script: list[dict[str, Any] | str] = [
        {"name": "evalkit__get_patient", "arguments": {"patient_id": "P-100"}},
        "Ana Silva's record is R-77.",
    ]
    with scripted_model(script) as url:
        config = tmp_path / "cline.yaml"
        config.write_text(
            f"name: cline-mcp\nseed: 7\nruns: 1\nscenarios: [{scenario}]\n"
            f"backends:\n  - {{label: scripted, kind: openai, model: scripted, url: '{url}', concurrency: 1}}\n"
            f"agents:\n  cline-act: {{agent: cline, budget: 5, time_limit_s: 120, "
            f"options: {json.dumps({'install_dir': str(INSTALL)})}}}\n",
            encoding="utf-8",
        )
        output = tmp_path / "out.jsonl"
        run_config(load_config(config), output)
    (run,) = load_results([output]).runs
    assert (run.outcome, run.error, run.served.calls if run.served else None) == ("final_answer", None, 2)
    offered = set(run.calls[0].tools)
    assert {"evalkit__get_patient", "evalkit__recommend"} <= offered and "submit_and_exit" not in offered
    tool_messages = [m for m in run.messages if m.role == "tool"]
    assert len(tool_messages) == 1  # the mock's answer, as Cline passed it back to the model
    result = json.loads(tool_messages[0].content or "")
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == {"name": "Ana Silva", "age": 67, "record_id": "R-77"}
