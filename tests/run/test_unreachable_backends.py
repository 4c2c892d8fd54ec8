"""`run` exits 3, with the first error text on stderr, when every counted run of a
backend is an `infra_error`, or more of them than the config's `max_infra_error_rate`; a backend with
some answers under that limit, and the simulated one, exit 0.

Backends are real sockets on loopback: `tests.faultserver` answering 401 to every chat request (not
retryable), and a port that was just closed (connection refused, retried then given up).
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import main
from evalkit.errors import BackendError
from evalkit.results.integrity import unreachable_backends
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig
from evalkit.run.runner import run_config
from tests.faultserver import FaultServer
from tests.report import records

SCENARIOS = str(Path(__file__).resolve().parents[2] / "scenarios" / "*" / "*.yaml")
SIM = {"label": "sim", "kind": "sim", "model": "strong"}
NO_WAIT = {"attempts": 2, "base_delay_s": 0, "max_delay_s": 0}


def served(label: str, url: str) -> dict[str, Any]:
    """An OpenAI-compatible local server: no key needed, two attempts without waiting."""
    return {
        "label": label,
        "kind": "openai",
        "model": "fault",
        "url": url + "/v1",
        "timeout_s": 10,
        "concurrency": 1,
        "retry": NO_WAIT,
    }


def config_doc(*backends: dict[str, Any], runs: int = 1) -> dict[str, Any]:
    return {
        "name": "dead",
        "seed": 9,
        "runs": runs,
        "scenarios": [SCENARIOS],
        "families": ["casual_greeting"],
        "backends": list(backends),
        "strategies": {"trust_text": ["trust_text"]},
    }


def run_cli(tmp_path: Path, doc: dict[str, Any], *extra: str) -> tuple[int, Path]:
    cfg, out = tmp_path / "c.yaml", tmp_path / "r.jsonl"
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return main(["run", str(cfg), "-o", str(out), "--no-progress", *extra]), out


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there now: a connect is refused


def error_lines(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.startswith("evalkit: error: ")]


def first_error(out: Path, label: str) -> str:
    runs = [r for r in load_results([out]).runs if r.cell.backend == label]
    assert runs and {r.outcome for r in runs} == {"infra_error"}
    return next(r.error for r in runs if r.error).splitlines()[0]


def test_a_401_on_every_call_exits_3_with_the_error_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # before: exit 0, and the terminal showed no error text
    with FaultServer(["401"]) as server:
        code, out = run_cli(tmp_path, config_doc(served("local", server.url), runs=2))
    assert code == 3 and len(server.hits) == len(load_results([out]).runs)  # not retried: one request per run
    first = first_error(out, "local")
    assert first.startswith("HTTP 401 from /v1/chat/completions") and "injected 401" in first
    assert error_lines(capsys.readouterr().err) == [
        f"evalkit: error: backend 'local': every run failed (infra_error): {first}"
    ]
    # the file is whole (a resume can retry) and says the backend was down, not measured
    assert load_results([out]).footers[-1].status == "infra_errors"


def test_connection_refused_exits_3_with_the_error_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    code, out = run_cli(tmp_path, config_doc(served("gone", f"http://127.0.0.1:{port}")))
    assert code == 3
    first = first_error(out, "gone")
    assert f"127.0.0.1:{port}" in first and "ConnectError" in first
    assert error_lines(capsys.readouterr().err) == [
        f"evalkit: error: backend 'gone': every run failed (infra_error): {first}"
    ]


def test_only_the_dead_backend_is_named_beside_a_working_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultServer(["401"]) as server:
        code, out = run_cli(tmp_path, config_doc(SIM, served("local", server.url)))
    assert code == 3
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith("evalkit: error: backend 'local': every run failed") and "'sim'" not in line
    assert {r.outcome for r in load_results([out]).runs if r.cell.backend == "sim"} != {"infra_error"}


def test_a_backend_that_answers_some_calls_exits_0_under_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a run's seed (sent in each request) picks its fate: odd seeds get 401s, even ones answers
    with FaultServer(lambda seed, index: "401" if (seed or 0) % 2 else "ok") as server:
        code, out = run_cli(tmp_path, config_doc(served("flaky", server.url), runs=3), "--max-infra-error-rate", "0.9")
    runs = load_results([out]).runs
    failed = {r.run_id for r in runs if r.outcome == "infra_error"}
    assert failed == {r.run_id for r in runs if r.seed % 2} and 0 < len(failed) < len(runs)
    assert code == 0 and not error_lines(capsys.readouterr().err)
    assert load_results([out]).footers[-1].status == "complete"


def test_a_backend_past_the_limit_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Half its runs infra errors, against the default limit of 10%: the backend was down half the
    time, and the run says so in one line and in its footer."""
    with FaultServer(lambda seed, index: "401" if (seed or 0) % 2 else "ok") as server:
        code, out = run_cli(tmp_path, config_doc(served("flaky", server.url), runs=3))
    results = load_results([out])
    failed = sum(r.outcome == "infra_error" for r in results.runs)
    assert code == 3 and 0 < failed < len(results.runs)
    (line,) = error_lines(capsys.readouterr().err)
    assert line.startswith(
        f"evalkit: error: backend 'flaky': {failed} infra errors in {len(results.runs)} runs, "
        "more than max_infra_error_rate 10% (the first: HTTP 401 from /v1/chat/completions"
    )
    assert results.footers[-1].status == "infra_errors"


def test_a_retry_after_the_server_recovers_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kind = ["401"]  # what the server answers now: the same server (the same URL, so the same config)
    with FaultServer(lambda seed, index: kind[0]) as server:
        doc = config_doc(served("local", server.url))
        assert run_cli(tmp_path, doc)[0] == 3
        kind[0] = "ok"
        assert run_cli(tmp_path, doc, "--resume")[0] == 3  # nothing pending: still all infra errors
        code, out = run_cli(tmp_path, doc, "--resume", "--retry-infra")
    assert code == 0 and {r.outcome for r in load_results([out]).runs} == {"final_answer"}
    assert len(error_lines(capsys.readouterr().err)) == 2


def test_unreachable_backends_in_the_python_api(tmp_path: Path) -> None:
    sim_only = run_config(RunConfig.model_validate(config_doc(SIM)), tmp_path / "sim.jsonl")
    assert unreachable_backends(load_results([sim_only])) is None
    with FaultServer(["401"]) as server:
        out = run_config(RunConfig.model_validate(config_doc(SIM, served("local", server.url))), tmp_path / "r.jsonl")
    error = unreachable_backends(load_results([out]))
    assert isinstance(error, BackendError)
    assert str(error) == f"backend 'local': every run failed (infra_error): {first_error(out, 'local')}"


def test_unreachable_backends_counts_only_counted_runs_and_shows_the_first_line_of_the_first_error() -> None:
    infra: dict[str, Any] = {"outcome": "infra_error", "completed": False}
    runs = [
        # every counted run of 'a' failed; its unsupported cell does not count either way
        records.run(backend="a", index=0, **infra),
        records.run(backend="a", index=1, error="HTTP 401 from /v1/chat/completions\ndetails", **infra),
        records.run(backend="a", index=2, error="a later error", **infra),
        records.run(backend="a", strategy="grammar", outcome="unsupported", completed=False),
        records.run(backend="b", index=0, error="ConnectError calling http://127.0.0.1:9/v1", **infra),
        records.run(backend="c", index=0, **infra),  # no error text at all
        # 'd' answered once: not dead; 'e' has only unsupported cells: nothing ran, nothing failed
        records.run(backend="d", index=0, error="HTTP 503", **infra),
        records.run(backend="d", index=1),
        records.run(backend="e", outcome="unsupported", completed=False),
    ]
    error = unreachable_backends(records.results(runs))
    assert isinstance(error, BackendError) and str(error) == (
        "backend 'a': every run failed (infra_error): HTTP 401 from /v1/chat/completions; "
        "backend 'b': every run failed (infra_error): ConnectError calling http://127.0.0.1:9/v1; "
        "backend 'c': every run failed (infra_error): no error text"
    )
    assert (
        unreachable_backends(records.results([records.run(backend="e", outcome="unsupported", completed=False)]))
        is None
    )
