"""A model front whose backend stays down (a llama-server call past its deadline): the caller gets a 502
in the protocol's own JSON with the backend's one-line reason, and no traceback is logged."""

from __future__ import annotations

import logging

import httpx
import pytest

from evalkit.backends.sim_server import SimServer
from evalkit.errors import BackendError
from tests.fakes import ScriptedBackend
from tests.sim_http import sim_http

REASON = "llama-server: no answer within 120 s (timeout), after 4 attempts"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        ("/v1/messages", {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}),
    ],
)
def test_a_backend_that_stays_down_is_a_502_said_in_one_line(
    path: str, body: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    server = SimServer("m", backend=ScriptedBackend([BackendError(REASON)]))  # type: ignore[arg-type]
    with caplog.at_level(logging.DEBUG), sim_http(server) as url:
        answer = httpx.post(url + path, json=body, timeout=30)
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert REASON in error["message"]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
