"""No credential reaches a written file or the terminal, whatever its place and encoding.

A credential drawn by hypothesis goes into the backend's URL (`user:password@`, a `?token=` query),
its key (a header), or both; a loopback server then answers the way careless servers do: it echoes
every request header and the request line (the Basic auth base64, the bearer key, the
percent-encoded query) in an answer or in a 401 error, or redirects to a `Location` with the
credential in its path. After `evalkit run --record --report`, no file written and nothing printed
holds the credential raw, percent-encoded or base64-encoded (alone, or as Basic auth's `user:secret`).
"""

from __future__ import annotations

import base64
import json
import string
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.cli import main
from evalkit.results.secrets import public_url, redact, secrets_of

ROOT = Path(__file__).resolve().parents[2]
USER = "evalkit"
KEY_ENV = "EVALKIT_REDACTION_KEY"
# no HTML or JSON metacharacters: an escaped form would hide a leak from the plain substring check
ALPHABET = string.ascii_letters + string.digits + "-._~:@/+!$%*,;= "


class _Echo(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _reply(self, status: int, doc: Any, extra: dict[str, str] | None = None) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._reply(200, {"object": "list", "data": [{"id": "m", "seen": self.requestline, **dict(self.headers)}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        echoed = f"{self.requestline} {json.dumps(dict(self.headers))}"
        if self.server.mode == "redirect":
            where = (
                f"http://127.0.0.1:9/v1/{quote(self.server.secret, safe='')}/chat?next={quote_plus(self.server.secret)}"
            )
            self._reply(302, {}, {"Location": where})
        elif self.server.mode == "401":
            self._reply(401, {"error": {"message": f"bad credentials: {echoed}"}})
        else:
            answer = {"role": "assistant", "content": f"you sent {echoed}"}
            self._reply(200, {"choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    mode = "echo"
    secret = ""


@contextmanager
def echo_server(mode: str, secret: str) -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Echo)
    server.mode, server.secret = mode, secret
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def forms(secret: str) -> set[str]:
    """Every way the secret could leak: raw, percent-encoded, base64 (alone and as Basic auth)."""
    raw = secret.encode()
    found = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    for blob in (raw, f"{USER}:{secret}".encode()):
        found |= {base64.b64encode(blob).decode(), base64.urlsafe_b64encode(blob).decode()}
    return found


def run_once(tmp: Path, host: str, secret: str, places: frozenset[str]) -> tuple[list[Path], str]:
    userinfo = f"{USER}:{quote(secret, safe='')}@" if "password" in places else ""
    query = f"?token={quote(secret, safe='')}" if "query" in places else ""
    entry: dict[str, Any] = {
        "label": "echo",
        "kind": "openai",
        "model": "m",
        "url": f"http://{userinfo}{host}/v1{query}",
        "retry": {"attempts": 1, "base_delay_s": 0, "max_delay_s": 0},
        "timeout_s": 5,
        "concurrency": 1,
    }
    if "header" in places:
        entry["api_key_env"] = KEY_ENV
    config = {
        "name": "redaction",
        "seed": 1,
        "runs": 1,
        "scenarios": [str(ROOT / "scenarios" / "casual_greeting" / "hi.yaml")],
        "backends": [entry],
        "strategies": {"trust_text": ["trust_text"]},
        "sampling": {"temperature": 0.0, "max_tokens": 16},
    }
    (tmp / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    out, rec, report = tmp / "r.jsonl", tmp / "rec", tmp / "report.html"
    argv = ["run", str(tmp / "c.yaml"), "-o", str(out), "--record", str(rec), "--report", str(report)]
    main([*argv, "--no-progress"])
    return sorted(p for p in tmp.rglob("*") if p.is_file() and p.name != "c.yaml"), ""


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    secret=st.text(ALPHABET, min_size=6, max_size=24).map(lambda s: "Zk9" + s),
    places=st.sets(st.sampled_from(["password", "query", "header"]), min_size=1).map(frozenset),
    mode=st.sampled_from(["echo", "401", "redirect"]),
)
def test_no_credential_in_any_encoding_reaches_a_file_or_the_terminal(
    secret: str,
    places: frozenset[str],
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(KEY_ENV, secret)
    with TemporaryDirectory() as name, echo_server(mode, secret) as host:
        files, _ = run_once(Path(name), host, secret, places)
        printed = capsys.readouterr()
        written = {p.name: p.read_text(encoding="utf-8") for p in files}
    assert "r.jsonl" in written and "report.html" in written
    for form in forms(secret):
        for file_name, text in written.items():
            assert form not in text, f"{form!r} ({mode}, {sorted(places)}) in {file_name}"
        assert form not in printed.out + printed.err, f"{form!r} printed ({mode}, {sorted(places)})"


def test_a_key_in_a_redirect_path_is_blanked_in_every_encoding() -> None:
    key = "sk-path-secret/9+x"
    location = f"http://example.test/v1/{quote(key, safe='')}/x/{base64.b64encode(key.encode()).decode()}"
    shown = public_url(redact(location, [key]))
    assert all(form not in shown for form in forms(key)) and "/v1/[redacted]/x/[redacted]" in shown


def test_the_basic_auth_of_a_url_password_is_among_its_secrets() -> None:
    secrets = secrets_of(f"http://{USER}:p%40ss-word@host/v1")
    assert base64.b64encode(f"{USER}:p@ss-word".encode()).decode() in secrets
    assert "p@ss-word" in secrets
