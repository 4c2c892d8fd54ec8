"""`--record DIR`: a transparent wrapper that stores every request and its answer for replay.

    DIR/recordings.jsonl   one line per backend call, appended as it finishes:
                           {key, run_id, call_index, kind, model, request, completion | error}
    DIR/provenance.json    the inner backend's describe(), its supports() answers, its simulated flag

A retried call is recorded once per attempt (the error, then the answer), so a replay retries the
same way. The key is a hash of what decides the answer: the backend kind and model and the whole
request, minus `Message.origin` (harness bookkeeping the backend never sees), and with an agent's
run-to-run texts (its temporary folders, the date) as placeholders (`CallContext.placeholders`). API keys are never in
a request or a completion, and error texts are redacted where they are made (`_http`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from evalkit.backends.base import Backend, Feature
from evalkit.chat import CallContext, ChatRequest, Completion, with_placeholders
from evalkit.errors import BackendError, ResultsError, UnsupportedFeature
from evalkit.results.writer import output_error

__all__ = [
    "PROVENANCE_FILE",
    "RECORDINGS_FILE",
    "RecordingBackend",
    "prune_unfinished",
    "request_document",
    "request_key",
]

RECORDINGS_FILE = "recordings.jsonl"
PROVENANCE_FILE = "provenance.json"
ALL_FEATURES: tuple[Feature, ...] = get_args(Feature)


def request_document(request: ChatRequest, placeholders: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The request as JSON, without the harness's `origin` marks, an agent's run-to-run texts (its
    temporary folders, the date: `CallContext.placeholders`) replaced by their placeholders."""
    document = request.model_dump(mode="json", exclude={"messages": {"__all__": {"origin"}}})
    return with_placeholders(document, placeholders) if placeholders else document


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(kind: str, model: str, request: ChatRequest, placeholders: Mapping[str, str] | None = None) -> str:
    return hashlib.sha256(
        _canonical({"kind": kind, "model": model, "request": request_document(request, placeholders)}).encode()
    ).hexdigest()


def error_document(exc: BackendError) -> dict[str, Any]:
    return {
        "message": str(exc),
        "retryable": exc.retryable,
        "status": exc.status,
        "unsupported": isinstance(exc, UnsupportedFeature),
    }


def prune_unfinished(directory: Path, finished: set[str]) -> int:
    """Drop the recorded calls of runs that never finished (cut off by an interrupt); returns how many.

    A resumed run starts again from its first call; leaving the cut-off attempt in place would make
    a replay serve that attempt's answers to the new one. A last line cut short by a kill is dropped
    with them, as the results file drops its own.
    """
    path = Path(directory) / RECORDINGS_FILE
    if not path.exists():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [
        line
        for lineno, line in enumerate(lines, start=1)
        if line.endswith("\n") and line.strip() and _run_id(path, lineno, line) in finished
    ]
    if len(kept) != len(lines):
        tmp = path.with_suffix(".tmp")
        try:
            tmp.write_text("".join(kept), encoding="utf-8")
            tmp.replace(path)
        except OSError as exc:
            raise output_error(path, exc) from exc
    return len(lines) - len(kept)


def _run_id(path: Path, lineno: int, line: str) -> object:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{lineno}: not JSON: {exc.msg}") from exc
    return data.get("run_id") if isinstance(data, dict) else None


def _append_line(path: Path, text: str) -> None:
    """Append one line whole or not at all: a failed write (disk full) is cut back, so the next
    line never lands on the end of a fragment."""
    try:
        with open(path, "ab", buffering=0) as fh:
            start = fh.seek(0, os.SEEK_END)
            try:
                view = memoryview(text.encode())
                while view:
                    view = view[fh.write(view) or 0 :]
            except OSError:
                with contextlib.suppress(OSError):
                    fh.truncate(start)
                raise
    except OSError as exc:
        raise output_error(path, exc) from exc


class RecordingBackend:
    """Wraps any backend; answers exactly as it does and writes down every call."""

    def __init__(self, inner: Backend, directory: Path):
        self.inner = inner
        self.kind = inner.kind
        self.model = inner.model
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(self.directory, exc) from exc
        self._provenance_written = False

    @property
    def simulated(self) -> bool:  # the inner backend's, which its describe() may learn (`evalkit serve sim`)
        return self.inner.simulated

    def supports(self, feature: Feature) -> bool:
        return self.inner.supports(feature)

    def _write_provenance(self, description: dict[str, Any] | None, error: str | None = None) -> None:
        doc: dict[str, Any] = {
            "kind": self.kind,
            "model": self.model,
            "simulated": self.simulated,
            "describe": description,
            "supports": {f: self.inner.supports(f) for f in ALL_FEATURES},
        }
        if error is not None:
            doc["describe_error"] = error
        path = self.directory / PROVENANCE_FILE
        try:
            path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        except OSError as exc:
            raise output_error(path, exc) from exc
        self._provenance_written = True

    async def describe(self) -> dict[str, Any]:
        try:
            description = await self.inner.describe()
        except BackendError as exc:
            self._write_provenance(None, str(exc))
            raise
        # supports() answers are only final once describe() has run (llama-server reads its template)
        self._write_provenance(description)
        return description

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _append(self, request: ChatRequest, context: CallContext, outcome: dict[str, Any]) -> None:
        line = {
            "key": request_key(self.kind, self.model, request, context.placeholders),
            "run_id": context.run_id,
            "call_index": context.call_index,
            "kind": self.kind,
            "model": self.model,
            "request": request_document(request, context.placeholders),
            **outcome,
        }
        # one write per line, between awaits: concurrent runs on one event loop cannot interleave
        _append_line(self.directory / RECORDINGS_FILE, _canonical(line) + "\n")

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        if not self._provenance_written:  # describe() was skipped; record what supports() says now
            self._write_provenance(None)
        try:
            completion = await self.inner.complete(request, context)
        except BackendError as exc:
            self._append(request, context, {"error": error_document(exc)})
            raise
        self._append(request, context, {"completion": completion.model_dump(mode="json")})
        return completion
