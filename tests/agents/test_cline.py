"""The Cline adapter without Cline: its `--json` output read back, the files and argv of a run, and the
one-line errors of a missing or broken install.

The `--json` samples in tests/data/cline/ are Cline 3.0.65's own output, recorded against a stub model
server (docs/agents.md, "Cline"): a tool call then a text reply (act), a `submit_and_exit` (yolo), the
mistake limit (`--retries 2`, a model that calls an unknown tool), the model API unreachable, and
yolo mode's greeting loop cut by SIGINT (which ends it with no `run_result`). Real Cline runs are in
tests/agents/test_cline_real.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest

from evalkit.agents.base import AgentEnd, AgentRun
from evalkit.agents.cline import ClineAgent, events, final_reply, find_install, finish_reason
from evalkit.agents.entry import AgentEntry
from evalkit.agents.registry import build_agent
from evalkit.backends.sim_server import SimServer
from evalkit.errors import ConfigError
from evalkit.scenario.model import load_scenario
from tests.sim_http import sim_http

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "cline"


def _sample(name: str) -> str:
    return (DATA / f"{name}.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("sample", "reason", "reply"),
    [
        ("act-tool-then-reply", "completed", "Hello! How can I help?"),
        ("yolo-submit", "completed", "Said hello to the user"),  # the summary, not Cline's "Submission recorded"
        ("act-mistake-limit", "aborted", None),  # its text is ""
        ("act-api-error", "error", None),  # its text is Cline's own error message
        ("yolo-greeting-interrupted", None, None),  # SIGINT: no run_result at all
    ],
)
def test_the_final_reply_and_finish_reason_are_read_from_recorded_json_output(
    sample: str, reason: str | None, reply: str | None
) -> None:
    stdout = _sample(sample)
    assert finish_reason(stdout) == reason
    assert final_reply(stdout) == reply


def test_the_act_sample_holds_the_mcp_tool_call_as_cline_named_it() -> None:
    starts = [e["event"] for e in events(_sample("act-tool-then-reply")) if e.get("type") == "agent_event"]
    tools = [e for e in starts if e.get("type") == "content_start" and e.get("contentType") == "tool"]
    assert [(t["toolName"], t["input"]) for t in tools] == [("evalkit__get_weather", {"city": "Paris"})]


def test_lines_that_are_not_json_objects_are_passed_over() -> None:
    cut = _sample("act-tool-then-reply")
    stdout = 'ts":"2026-11-28T08:29:38Z"}\nnot json\n[1, 2]\n{broken\n' + cut  # a buffer's cut first line
    assert final_reply(stdout) == "Hello! How can I help?"
    assert len(list(events(stdout))) == len(cut.splitlines())


def _install(folder: Path, version: str = "3.0.65", mode: int = 0o755) -> Path:
    """A Cline install as scripts/install-cline.sh leaves it, with a stand-in binary."""
    binary = folder / "node_modules" / "@cline" / "cli-linux-x64" / "bin" / "cline"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"#!/bin/sh\nexit 0\n")
    binary.chmod(mode)
    record = {"package": "cline", "version": version, "binary": str(binary.relative_to(folder)), "sha256": "x"}
    (folder / "install.json").write_text(json.dumps(record))
    return binary


def _run(tmp_path: Path, prompt: str = "hi") -> AgentRun:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return AgentRun(
        model_base_url="http://127.0.0.1:8766/run/abc/v1",
        api_key="evalkit-no-key",
        model="small-local",
        mcp_url="http://127.0.0.1:9000/mcp/abc",
        mcp_server_name="evalkit",
        prompt=prompt,
        home=home,
        workdir=work,
        time_limit_s=60,
    )


def test_a_run_writes_the_provider_and_mcp_files_and_runs_cline_with_them(tmp_path: Path) -> None:
    binary = _install(tmp_path / "install")
    agent = ClineAgent({"install_dir": "install", "yolo": True, "retries": 3}, tmp_path)
    run = _run(tmp_path)
    argv = agent.command(run)
    config = run.home / ".cline"
    settings = config / "data" / "settings"
    providers = json.loads((settings / "providers.json").read_text())
    assert providers["version"] == 1 and providers["lastUsedProvider"] == "openai-compatible"
    entry = providers["providers"]["openai-compatible"]
    assert entry["settings"] == {
        "provider": "openai-compatible",
        "apiKey": "evalkit-no-key",
        "model": "small-local",
        "baseUrl": "http://127.0.0.1:8766/run/abc/v1",
    }
    assert {"updatedAt", "tokenSource"} <= set(entry)  # without them Cline replaces the file (docs/agents.md)
    mcp = json.loads((settings / "cline_mcp_settings.json").read_text())
    assert mcp == {
        "mcpServers": {"evalkit": {"transport": {"type": "streamableHttp", "url": "http://127.0.0.1:9000/mcp/abc"}}}
    }
    assert argv == [
        str(binary.resolve()),
        "--json",
        "--yolo",
        "--retries",
        "3",
        "--config",
        str(config),
        "--data-dir",
        str(config / "data"),
        "--cwd",
        str(run.workdir),
        "--",
        "hi ",  # a one-word prompt gets the whitespace Cline needs
    ]
    assert agent.environment(run) == {"CLINE_MCP_SETTINGS_PATH": str(settings / "cline_mcp_settings.json")}


def test_act_mode_has_no_yolo_flag_and_a_prompt_with_whitespace_is_sent_unchanged(tmp_path: Path) -> None:
    _install(tmp_path / "install")
    argv = ClineAgent({"install_dir": "install"}, tmp_path).command(_run(tmp_path, "-v is a flag"))
    assert "--yolo" not in argv and argv[argv.index("--retries") + 1] == "6"
    assert argv[-2:] == ["--", "-v is a flag"]


def test_the_mistake_limit_is_a_failed_run_naming_cline_s_last_error(tmp_path: Path) -> None:
    agent = ClineAgent({"retries": 2, "install_dir": "none"}, tmp_path)
    end = agent.ended(_sample("act-mistake-limit"))
    assert isinstance(end, AgentEnd) and end.outcome == "failed"
    assert end.reason.startswith("Cline aborted the run at its mistake limit (--retries 2): 1 tool call(s) failed")
    assert "no_such_tool" in end.reason and "\n" not in end.reason and len(end.reason) < 400
    for other in ("act-tool-then-reply", "yolo-submit", "act-api-error", "yolo-greeting-interrupted"):
        assert agent.ended(_sample(other)) is None


def test_describe_names_the_mode_and_hashes_the_installed_binary(tmp_path: Path) -> None:
    binary = _install(tmp_path / "install")
    described = ClineAgent({"install_dir": "install", "yolo": True}, tmp_path).describe()
    assert described == {
        "name": "cline",
        "version": "3.0.65",
        "install_hash": "sha256:" + hashlib.sha256(binary.read_bytes()).hexdigest(),
        "mode": "yolo",
        "retries": "6",
    }


def test_an_install_is_found_in_the_working_folder_or_above_the_config(tmp_path: Path) -> None:
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    _install(checkout / ".agents" / "cline" / "3.0.65")
    configs = checkout / "configs" / "agents"
    configs.mkdir(parents=True)
    elsewhere.mkdir()
    found = checkout / ".agents" / "cline" / "3.0.65"
    assert find_install("3.0.65", configs, elsewhere) == found  # above the config file
    assert find_install("3.0.65", elsewhere, checkout) == found  # in the working folder
    assert find_install("3.0.65", elsewhere, elsewhere) is None
    assert find_install("3.0.64", configs, checkout) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"version": "9.9.9"}, "cline 9.9.9 is not installed (no .agents/cline/9.9.9/install.json): "),
        ({"install_dir": "install", "version": "3.0.64"}, "records cline 3.0.65, not 3.0.64: "),
    ],
)
def test_a_missing_or_other_install_is_one_line_naming_the_install_command(
    tmp_path: Path, options: dict[str, object], message: str
) -> None:
    _install(tmp_path / "install")
    with pytest.raises(ConfigError) as err:
        ClineAgent(options, tmp_path).check()
    assert message in str(err.value) and "\n" not in str(err.value)
    version = options["version"]
    assert str(err.value).endswith(f"run: bash scripts/install-cline.sh {version}")


def test_a_binary_that_is_not_executable_is_one_line(tmp_path: Path) -> None:
    binary = _install(tmp_path / "install", mode=0o644)
    with pytest.raises(ConfigError, match=r"not an executable file: run: bash scripts/install-cline.sh 3.0.65$"):
        ClineAgent({"install_dir": "install"}, tmp_path).check()
    assert binary.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"retries": 0}, "agents.c: options.retries: Input should be greater than or equal to 1"),
        ({"colour": "red"}, "agents.c: options.colour: Extra inputs are not permitted"),
        ({"version": "latest"}, "agents.c: options.version: String should match pattern"),
    ],
)
def test_bad_options_are_one_line_naming_the_option(tmp_path: Path, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_agent("c", AgentEntry(agent="cline", options=options), tmp_path)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_the_simulated_model_calls_a_scenario_tool_by_the_name_cline_offers_it_under() -> None:
    scenario = load_scenario(ROOT / "scenarios" / "sequential_reasoning" / "medication_chain.yaml")
    offered = [
        {"type": "function", "function": {"name": f"evalkit__{t.name}", "description": t.description,
                                          "parameters": t.parameters}}
        for t in scenario.tools
    ]  # fmt: skip
    messages = [{"role": "system", "content": scenario.system}, {"role": "user", "content": scenario.user_text(0)}]
    called: set[str] = set()
    with sim_http(SimServer("strong", [scenario])) as url:
        for seed in range(6):
            body = {"model": "strong", "messages": messages, "tools": offered, "seed": seed}
            reply = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=30).json()
            called |= {c["function"]["name"] for c in reply["choices"][0]["message"].get("tool_calls") or []}
    assert called, "the strong profile calls a tool first on this scenario"
    assert called <= {t["function"]["name"] for t in offered}, called


def test_the_date_in_cline_s_system_prompt_is_recorded_as_a_placeholder(tmp_path: Path) -> None:
    from datetime import date

    from evalkit.agents.execute import placeholders
    from evalkit.chat import with_placeholders

    run = _run(tmp_path, "hi")
    marks = placeholders(ClineAgent({"install_dir": "none"}, tmp_path), run, run.workdir.parent)
    prompt = f"2. Date: {date.today():%m/%d/%Y}\n4. Working Directory: {run.workdir}\nHOME={run.home}\n"
    assert with_placeholders(prompt, marks) == "2. Date: {date}\n4. Working Directory: {workdir}\nHOME={home}\n"
