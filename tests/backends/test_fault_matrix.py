"""A small matrix through the CLI against `tests.faultserver`: a seeded random mix of every fault kind.

Every chat request the server answers is logged with the run's seed, so the expected outcome of each
run is derived from what the server did, independently of the runner's own bookkeeping:

- a retryable fault (5xx, 429, hang and drip past the deadline, reset, truncated) is retried until
  `attempts` are used up, then the run is `infra_error`;
- a non-retryable one (401, a redirect, garbage, empty choices) ends the run as `infra_error` on the
  spot, with no second request;
- otherwise every call got an answer, and the run is not `infra_error`.

The key, the URL's password and a `?key=` query credential must not appear in any file written
(results, recordings, the HTML report) nor in anything printed.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import httpx
import pytest
import yaml

from evalkit.backends.openai import OpenAIBackend
from evalkit.cli import main
from evalkit.errors import BackendError
from evalkit.results.reader import load_results
from tests.backends import CONTEXT, arun, entry, request
from tests.faultserver import KINDS, RETRYABLE, FaultServer, Hit, seeded_mix

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-fault-matrix-93c1d7a2"
PASSWORD = "pw-fault-matrix-5521"
QUERY_KEY = "qk-fault-matrix-e0b4"
ATTEMPTS = 3
MIX = {
    "ok": 4.0,
    "echo": 1.5,
    "500": 0.6,
    "503": 0.6,
    "429": 0.6,
    "401": 0.4,
    "redirect": 0.4,
    "hang": 0.4,
    "drip": 0.4,
    "reset": 0.5,
    "truncated": 0.5,
    "garbage": 0.4,
    "empty": 0.4,
}
MIX_SEED = 106  # the first seed whose first requests alone draw every kind for this matrix
ANSWERED = frozenset({"ok", "echo"})


def expected_outcomes(hits: list[Hit]) -> dict[int, bool]:
    """seed -> whether the run must be infra_error; asserts no request followed a run's end."""
    by_seed: dict[int, list[str]] = defaultdict(list)
    for hit in sorted(hits, key=lambda h: (h.seed or 0, h.index)):
        assert hit.seed is not None and hit.index == len(by_seed[hit.seed])
        by_seed[hit.seed].append(hit.kind)
    failed: dict[int, bool] = {}
    for seed, kinds in by_seed.items():
        streak, ended = 0, False
        for position, kind in enumerate(kinds):
            assert not ended, f"seed {seed}: request {position} ({kind}) sent after the run ended: {kinds}"
            if kind in ANSWERED:
                streak = 0
            elif kind in RETRYABLE:
                streak += 1
                ended = streak == ATTEMPTS
            else:
                ended = True  # never retried
        failed[seed] = ended
    return failed


def write_config(tmp_path: Path, url: str) -> Path:
    retry = {"attempts": ATTEMPTS, "base_delay_s": 0, "max_delay_s": 0}
    doc = {
        "name": "fault-matrix",
        "seed": 7,
        "runs": 6,
        "scenarios": [
            str(ROOT / "scenarios" / "casual_greeting" / "hi.yaml"),
            str(ROOT / "scenarios" / "sequential_reasoning" / "weather_trip.yaml"),
        ],
        "backends": [
            {
                "label": "proxy",
                "kind": "openai",
                "model": "fault",
                "url": f"{url}/v1?key={QUERY_KEY}",
                "api_key_env": "EVALKIT_FAULT_MATRIX_KEY",
                "timeout_s": 1.5,
                "concurrency": 4,
                "retry": retry,
            },
            {
                "label": "llama",
                "kind": "llama-server",
                "model": "fault",
                "url": url.replace("http://", f"http://evalkit:{PASSWORD}@"),
                "api_key_env": "EVALKIT_FAULT_MATRIX_KEY",
                "timeout_s": 1.5,
                "concurrency": 4,
                "retry": retry,
            },
        ],
        "strategies": {"trust_text": ["trust_text"]},
        "sampling": {"temperature": 0.0, "max_tokens": 32},
    }
    path = tmp_path / "matrix.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_a_seeded_fault_mix_gives_exact_counts_exact_infra_errors_and_no_secret_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EVALKIT_FAULT_MATRIX_KEY", KEY)
    out, recordings, report = tmp_path / "results.jsonl", tmp_path / "rec", tmp_path / "report.html"
    with FaultServer(seeded_mix(MIX_SEED, MIX), key=KEY, drip_s=0.1, lifetime_s=120) as server:
        code = main(
            [
                "run",
                str(write_config(tmp_path, server.url)),
                "-o",
                str(out),
                "--record",
                str(recordings),
                "--report",
                str(report),
                "--no-progress",
            ]
        )
        hits = server.hits
    printed = capsys.readouterr()

    results = load_results([out])
    assert code in (0, 3)  # 3 once every counted run of a backend failing is reported that way
    assert len(results.runs) == 2 * 2 * 6 and len({r.run_id for r in results.runs}) == 24
    assert results.footers[-1].runs_written == 24

    failed = expected_outcomes(hits)
    assert set(failed) == {r.seed for r in results.runs}  # every run reached the server
    assert {r.run_id: r.outcome == "infra_error" for r in results.runs} == {
        r.run_id: failed[r.seed] for r in results.runs
    }
    kinds_seen = {h.kind for h in hits}
    assert kinds_seen == set(KINDS), set(KINDS) - kinds_seen
    assert 0 < sum(failed.values()) < len(failed)
    for record in results.runs:
        if record.outcome == "infra_error":
            assert record.error, record.run_id

    files = [out, report, *sorted(p for p in recordings.rglob("*") if p.is_file())]
    assert len(files) >= 4
    for path in [*files]:
        text = path.read_text(encoding="utf-8")
        for secret in (KEY, PASSWORD, QUERY_KEY):
            assert secret not in text, f"{secret} in {path.name}"
    for secret in (KEY, PASSWORD, QUERY_KEY):
        assert secret not in printed.out + printed.err
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert [b["url"] for b in header["config"]["backends"]] == [f"{server.url}/v1?key=[redacted]", server.url]


KIND_ERRORS: dict[str, tuple[bool, str | tuple[str, ...]]] = {  # kind -> (retryable, how the error text starts)
    "500": (True, "HTTP 500 from /v1/chat/completions: injected 500"),
    "503": (True, "HTTP 503 from /v1/chat/completions: injected 503"),
    "429": (True, "HTTP 429 from /v1/chat/completions: injected 429"),
    "hang": (True, "deadline: no complete answer within 2 s"),
    "drip": (True, "deadline: no complete answer within 2 s"),
    # an RST read before the response begins: httpcore says "disconnected" or the read fails outright
    "reset": (True, ("RemoteProtocolError calling http://127.0.0.1:", "ReadError calling http://127.0.0.1:")),
    "truncated": (True, "RemoteProtocolError calling http://127.0.0.1:"),
    "401": (False, "HTTP 401 from /v1/chat/completions: injected 401 for key [redacted]"),
    "redirect": (False, "HTTP 302 from /v1/chat/completions: a redirect to http://127.0.0.1:9/elsewhere"),
    "garbage": (False, "invalid JSON from /v1/chat/completions"),
    "empty": (False, "unexpected chat completion shape (IndexError"),
}


@pytest.mark.parametrize("kind", sorted(KIND_ERRORS))
def test_each_fault_kind_is_one_backend_error_with_the_right_retry_decision(kind: str) -> None:
    retryable, starts = KIND_ERRORS[kind]

    async def call(url: str) -> None:
        async with httpx.AsyncClient(timeout=2.0) as client:
            backend = OpenAIBackend(entry=entry("openai", url=url, timeout_s=2.0), client=client, api_key=KEY)
            await backend.complete(request(), CONTEXT)

    with FaultServer([kind], key=KEY, drip_s=0.05) as server, pytest.raises(BackendError) as info:
        arun(call(server.url + "/v1"))
    assert info.value.retryable is retryable
    assert str(info.value).startswith(starts), str(info.value)
    assert KEY not in str(info.value)
