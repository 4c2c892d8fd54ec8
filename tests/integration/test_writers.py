"""Writers as separate processes: concurrent writers of one file, and a run stopped at start-up.

Each writer is a child process (`python -m evalkit ...`), as a user's second terminal would be."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from evalkit.results.integrity import check_integrity
from evalkit.results.reader import load_results
from evalkit.run.runner import run_config
from tests.run.test_runner import SCENARIOS, config

ROOT = Path(__file__).resolve().parents[2]


def _evalkit(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_four_concurrent_in_place_rescores_end_cleanly_with_every_run_once(tmp_path):
    # before: three of four ended with a FileNotFoundError traceback
    out = run_config(config(), tmp_path / "r.jsonl")
    scenarios = str(Path(SCENARIOS).parents[1])
    procs = [_evalkit("rescore", str(out), "-o", str(out), "--scenarios", scenarios) for _ in range(4)]
    ends = [(p.returncode, err.decode()) for p in procs for _, err in [p.communicate(timeout=300)]]
    assert all(code in (0, 2) for code, _ in ends), ends
    assert any(code == 0 for code, _ in ends)
    for code, err in ends:
        assert "Traceback" not in err
        assert code == 0 or ("in use" in err and err.count("\n") == 1)
    results = load_results([out])
    assert len(results.runs) == 48
    assert not [p for p in check_integrity(results) if p.severity == "error"]


class _Stall(BaseHTTPRequestHandler):
    """Answers nothing: every request waits until the test lets the server go."""

    asked = threading.Event()
    release = threading.Event()

    def do_GET(self) -> None:
        type(self).asked.set()
        type(self).release.wait(timeout=300)  # a guard against a hung test, not a measurement

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def stalling_server() -> Iterator[str]:
    _Stall.asked.clear()
    _Stall.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stall)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        _Stall.release.set()
        server.shutdown()
        server.server_close()


def test_ctrl_c_during_the_first_models_probe_leaves_no_file(tmp_path, stalling_server):
    # before: a footer-only file, which `run --resume` then refused ("no header record")
    cfg, out = tmp_path / "c.yaml", tmp_path / "r.jsonl"
    backend = {"label": "http", "kind": "openai", "url": stalling_server, "model": "m"}
    cfg.write_text(yaml.safe_dump(config(backends=[backend]).model_dump(mode="json", exclude={"base_dir"})))
    proc = _evalkit("run", str(cfg), "-o", str(out), "--no-progress")
    try:
        assert _Stall.asked.wait(timeout=120), "the run never asked for /v1/models"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err.decode()
    assert "Traceback" not in err.decode()
    assert not out.exists()
    assert not Path(f"{out}.lock").exists()
