"""Server phases with real processes: `evalkit serve sim` as the model server, tests/stub_proxy.py as the
guard proxy in front of it (a program that retries upstream on its own, crashes, answers 500, never
gets ready, or starts a child), and what evalkit makes of each."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.errors import ServerUnavailable
from evalkit.results.installed_files import installed_files
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config

ROOT = Path(__file__).resolve().parents[2]
STUB = ROOT / "tests/stub_proxy.py"
SCENARIOS = [ROOT / "tests/data/scenarios/e2e_hi.yaml", ROOT / "tests/data/scenarios/e2e_weather.yaml"]
SIM_PHASE = """        - name: model
          command: ["{python}", -m, evalkit, serve, sim, --model, small-local, --port, "{port}", --config, "{config}"]
"""


def stub_phase(*flags: str, extra: str = "") -> str:
    words = ", ".join(
        json.dumps(f) for f in ["{python}", str(STUB), "--upstream", "{upstream}", "--port", "{port}", *flags]
    )
    return f"        - name: stub\n          command: [{words}]\n{extra}"


def write_config(tmp_path: Path, phases: str, *, runs: int = 3, concurrency: int = 2, name: str = "phases") -> Path:
    scenarios = ", ".join(json.dumps(str(s)) for s in SCENARIOS)
    text = f"""name: {name}
seed: 3
runs: {runs}
scenarios: [{scenarios}]
backends:
  - label: chain
    kind: openai
    model: small-local
    concurrency: {concurrency}
    retry: {{attempts: 3, base_delay_s: 0.05, max_delay_s: 0.2}}
    serve:
      phases:
{phases}strategies:
  trust_text: [trust_text]
  retry_nudge: [retry_nudge]
"""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def evalkit(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def error_line(stderr: str) -> str:
    """The one error line `evalkit` ends with (before it: the progress line only, no traceback)."""
    lines = stderr.strip().splitlines()
    assert lines and lines[-1].startswith("evalkit: error: ") and "Traceback" not in stderr, stderr
    return lines[-1]


def running_with(text: str) -> list[int]:
    """Live processes whose command line holds `text` (a test's unique temporary path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = next(line for line in (entry / "status").read_text().splitlines() if line.startswith("State:"))
        except (OSError, StopIteration):
            continue
        if text in cmdline and " Z " not in state + " ":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State"))
    except (OSError, StopIteration):
        return False
    return "Z" not in state.split()[1]


def test_the_model_server_alone_serves_what_evalkit_sees(tmp_path: Path) -> None:
    """A chain of one phase: served == seen, call for call and token for token; the runs are the
    in-process simulated model's runs exactly."""
    results = load_results([run_config(load_config(write_config(tmp_path, SIM_PHASE)), tmp_path / "a.jsonl")])
    sim = tmp_path / "sim.yaml"
    sim.write_text(
        write_config(tmp_path, SIM_PHASE, name="x")
        .read_text()
        .split("    serve:")[0]
        .replace("kind: openai", "kind: sim")
        + "strategies:\n  trust_text: [trust_text]\n  retry_nudge: [retry_nudge]\n"
    )
    in_process = {r.run_id: r for r in load_results([run_config(load_config(sim), tmp_path / "sim.jsonl")]).runs}
    assert len(results.runs) == 12 and all(r.simulated for r in results.runs)
    for run in results.runs:
        assert run.served is not None and run.served.calls == run.model_calls and run.served.errors == 0
        assert (run.served.prompt_tokens, run.served.completion_tokens) == (
            run.usage.prompt_tokens,
            run.usage.completion_tokens,
        )
        same = in_process[run.run_id]
        assert (run.outcome, run.correct, run.retries, run.model_calls) == (
            same.outcome,
            same.correct,
            same.retries,
            same.model_calls,
        )


def test_a_proxy_that_retries_on_its_own_is_counted_at_the_model_server(tmp_path: Path) -> None:
    """The stub sends every request upstream three times: the model server served exactly three times
    the calls and tokens evalkit saw (the simulated model answers a repeated request alike)."""
    children = tmp_path / "child.pid"
    stub = stub_phase("--extra-calls", "2", "--child-pid-file", str(children), extra="          packages: [aiohttp]\n")
    results = load_results([run_config(load_config(write_config(tmp_path, SIM_PHASE + stub)), tmp_path / "a.jsonl")])
    assert running_with(str(tmp_path)) == [] and not alive(int(children.read_text()))  # the end stopped them all
    assert len(results.runs) == 12
    for run in results.runs:
        assert run.served is not None
        assert (run.served.calls, run.served.prompt_tokens, run.served.completion_tokens) == (
            3 * run.model_calls,
            3 * run.usage.prompt_tokens,
            3 * run.usage.completion_tokens,
        )
    started = results.headers[0].backends["chain"]["started_by_evalkit"]
    model, stub = started["phases"]
    assert started["chains"] == 2
    assert model["command"][1:5] == ["-m", "evalkit", "serve", "sim"] and "{port}" in model["command"]
    assert [p["name"] for p in model["packages"]] == ["evalkit"]
    assert stub["command"][1] == "tests/stub_proxy.py" and "{upstream}" in stub["command"]
    dist = importlib.metadata.distribution("aiohttp")  # the probe ran in another process: the same files
    files = installed_files(dist)
    assert files["files"] > 10 and "modified" not in files
    assert stub["packages"] == [{"name": "aiohttp", "version": dist.version, **files}]
    described = json.dumps(results.headers[0].backends)
    assert str(tmp_path) not in described and str(ROOT) not in described  # no machine paths in the header


def test_a_proxy_that_crashes_is_started_again_and_the_runs_go_on(tmp_path: Path) -> None:
    """The stub exits after 5 requests (24 planned, one chain): evalkit starts it again on its port and
    retries the call, up to three restarts; then the chain's runs end as infra errors naming it."""
    phases = SIM_PHASE + stub_phase("--crash-after", "5")
    config = load_config(write_config(tmp_path, phases, runs=6, concurrency=1))
    results = load_results([run_config(config, tmp_path / "a.jsonl")])
    assert len(results.runs) == 24  # every planned run has its record
    infra = [r for r in results.runs if r.outcome == "infra_error"]
    # four lifetimes of five requests each: every one answered, and counted at the model server
    assert sum(r.model_calls for r in results.runs) == 20 == sum(r.served.calls for r in results.runs if r.served)
    assert infra and all("server phase 'stub' exited with code 3 mid-run" in (r.error or "") for r in infra)
    assert "not started again after 3 restarts" in (infra[-1].error or "")


def test_a_crash_costs_no_run_and_resume_retries_the_infra_errors(tmp_path: Path) -> None:
    """A crash on every request: all runs are infra errors, counted apart; once the proxy is healthy,
    `--resume --retry-infra` runs them again and the file holds each run once, none lost."""
    fault = tmp_path / "fault"
    fault.write_text("crash")
    config = write_config(tmp_path, SIM_PHASE + stub_phase("--fault-file", str(fault)), runs=2, concurrency=1)
    output = tmp_path / "a.jsonl"
    first = evalkit("run", config, "-o", output)
    assert first.returncode == 3, first.stderr  # every run of the backend failed: exit 3 with the first error
    assert "server phase 'stub' exited with code 3 mid-run" in error_line(first.stderr)
    assert "not counted: 8 infra_error" in first.stdout
    fault.write_text("")
    again = evalkit("run", config, "-o", output, "--resume", "--retry-infra")
    assert again.returncode == 0, again.stderr
    results = load_results([output])
    assert len(results.runs) == 8 and all(r.counted for r in results.runs)


def test_a_proxy_answering_500_gives_infra_errors_not_model_failures(tmp_path: Path) -> None:
    config = write_config(tmp_path, SIM_PHASE + stub_phase("--status-500"), runs=1, concurrency=1)
    done = evalkit("run", config, "-o", tmp_path / "a.jsonl")
    assert done.returncode == 3 and "HTTP 500" in error_line(done.stderr)
    runs = load_results([tmp_path / "a.jsonl"]).runs
    assert len(runs) == 4 and {r.outcome for r in runs} == {"infra_error"}
    assert all(r.served is not None and r.served.calls == 0 for r in runs)  # the model was never asked


def test_a_phase_that_never_gets_ready_is_a_one_line_error_and_nothing_is_left_running(tmp_path: Path) -> None:
    pids = tmp_path / "child.pid"
    phase = stub_phase("--never-ready", "--child-pid-file", str(pids), extra="          timeout_s: 3\n")
    config = write_config(tmp_path, SIM_PHASE + phase, runs=1, concurrency=1)
    done = evalkit("run", config, "-o", tmp_path / "a.jsonl")
    assert done.returncode == 3, done.stderr
    assert "server phase 'stub' was not ready after 3 s: GET http" in error_line(done.stderr)
    assert not alive(int(pids.read_text()))  # the stub's child went with it
    assert running_with(str(tmp_path)) == []  # the model server phase too
    assert not (tmp_path / "a.jsonl").exists() or (tmp_path / "a.jsonl").stat().st_size == 0


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        phase = stub_phase(extra=f"          port: {port}\n")
        done = evalkit("run", write_config(tmp_path, SIM_PHASE + phase, runs=1), "-o", tmp_path / "a.jsonl")
    assert done.returncode == 3 and done.stderr == f"evalkit: error: server phase 'stub[0]': port {port} is in use\n"
    assert running_with(str(tmp_path)) == []


def test_ctrl_c_stops_every_phase_with_its_children_and_resume_finishes(tmp_path: Path) -> None:
    pids = tmp_path / "child.pid"
    phase = stub_phase("--child-pid-file", str(pids), "--extra-calls", "1")
    config = write_config(tmp_path, SIM_PHASE + phase, runs=40, concurrency=1)
    output = tmp_path / "a.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(output)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not output.exists() or output.read_text().count('"type":"run"') < 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not alive(int(pids.read_text())) and running_with(str(tmp_path)) == []
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert lines[-1]["type"] == "footer" and lines[-1]["status"] == "interrupted"
    done = evalkit("run", config, "-o", output, "--resume", timeout=300)
    assert done.returncode == 0, done.stderr
    runs = load_results([output]).runs
    assert len(runs) == 160 == len({r.run_id for r in runs})
    assert all(r.served is not None and r.served.calls == 2 * r.model_calls for r in runs)


def test_bad_phases_are_one_line_errors_naming_the_field(tmp_path: Path) -> None:
    where = "backends.0.serve.phases.1"
    cases = {
        "command: [x]\n          llama_server: {}": f"{where}: a phase runs either `command` or `llama_server`",
        'command: ["{python}", "{nope}"]': f"{where}.command: '{{nope}}': unknown placeholder {{nope}}",
        "command: [-m, x]\n          venv: no-such-venv": f"{where}.venv: ",
        "command: [no-such-program]": f"{where}.command: program 'no-such-program' not found on PATH",
    }
    for body, message in cases.items():
        config = write_config(tmp_path, SIM_PHASE + "        - name: stub\n          " + body + "\n")
        run = evalkit("run", config, "-o", tmp_path / "a.jsonl")
        assert run.returncode == 2 and run.stderr.count("\n") == 1 and message in run.stderr, (body, run.stderr)
        assert not (tmp_path / "a.jsonl").exists()
    first = SIM_PHASE.replace('"{port}",', '"{port}", --up, "{upstream}",')
    run = evalkit("validate", write_config(tmp_path, first))
    assert run.returncode != 0 and "the first phase (the model server) has no {upstream}" in run.stdout + run.stderr


def test_the_start_fails_cleanly_in_process(tmp_path: Path) -> None:
    """The same start-up failure through the Python API: ServerUnavailable, and no file written."""
    phase = stub_phase("--never-ready", extra="          timeout_s: 2\n")
    config = load_config(write_config(tmp_path, SIM_PHASE + phase, runs=1, concurrency=1))
    with pytest.raises(ServerUnavailable, match="was not ready after 2 s"):
        run_config(config, tmp_path / "a.jsonl")
    assert running_with(str(tmp_path)) == []
    assert os.environ.get("EVALKIT_NO_SUCH_VARIABLE") is None
