"""A server phase's `env:` values (a key the phase needs) never leave evalkit: not in the results
header, not in a run record (a crashed phase's last log line is copied into its infra errors), not in
the logs evalkit keeps, the report or the terminal. Real processes: a proxy's wrapper script that
prints its key, then crashes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalkit.results.secrets import encodings
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from tests.run.test_server_phases import ROOT, SIM_PHASE, STUB, stub_phase, write_config

MODEL_KEY = "sk-model-7f3a9c1e5b2d4860"
PROXY_KEY = "pk-proxy-19e8d7c6b5a43210"
# prints its key as a careless server does at start, and again as the last line when it dies
LEAKY = """#!/bin/bash
echo "starting with key $PROXY_KEY"
{python} {stub} "$@"
code=$?
echo "proxy died (key $PROXY_KEY, base64 $(printf %s "$PROXY_KEY" | base64))"
exit $code
"""


def test_phase_env_values_reach_no_file_report_or_terminal(tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.sh"
    leaky.write_text(LEAKY.format(python=sys.executable, stub=STUB), encoding="utf-8")
    leaky.chmod(0o755)
    model = SIM_PHASE + f"          env: {{MODEL_KEY: {MODEL_KEY}}}\n"
    proxy = (
        "        - name: stub\n"
        f'          command: ["{leaky}", --upstream, "{{upstream}}", --port, "{{port}}", --crash-after, "3"]\n'
        f"          env: {{PROXY_KEY: {PROXY_KEY}, PROXY_PORT: '{{port}}'}}\n"
    )
    config = write_config(tmp_path, model + proxy, runs=3, concurrency=1)
    logs = tmp_path / "tmp"
    logs.mkdir()
    output, report = tmp_path / "a.jsonl", tmp_path / "a.html"
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(output), "--report", str(report)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TMPDIR": str(logs)},
    )
    records = output.read_text(encoding="utf-8")
    assert "server phase 'stub' exited with code 3 mid-run" in records  # the crash is recorded...
    assert "proxy died (key [redacted], base64 [redacted])" in records  # ...with its last line, blanked
    kept = [p for p in logs.rglob("*") if p.is_file()]
    assert kept  # a phase failed: its logs are kept
    texts = {
        "results": records,
        "report": report.read_text(encoding="utf-8") if report.exists() else "",
        "terminal": done.stdout + done.stderr,
        **{str(p): p.read_text(encoding="utf-8", errors="replace") for p in kept},
    }
    for key in (MODEL_KEY, PROXY_KEY):
        for where, text in texts.items():
            assert not any(form in text for form in encodings(key)), (key, where)
    assert '"env":["PROXY_KEY","PROXY_PORT"]' in records.replace(" ", "")  # the header keeps the names


def test_a_key_a_proxy_echoes_in_its_errors_is_blanked_in_the_records(tmp_path: Path) -> None:
    """The proxy answers HTTP 500 naming the key its `env:` gave it: the infra errors keep the text,
    with the key blanked (the backend's own redaction knows only its own key and URL)."""
    phase = stub_phase("--status-500", extra=f"          env: {{STUB_KEY: {PROXY_KEY}}}\n")
    config = load_config(write_config(tmp_path, SIM_PHASE + phase, runs=1, concurrency=1))
    text = run_config(config, tmp_path / "a.jsonl").read_text(encoding="utf-8")
    assert "HTTP 500 from /v1/chat/completions: stub proxy failure (key [redacted])" in text
    assert not any(form in text for form in encodings(PROXY_KEY))
