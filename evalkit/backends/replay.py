"""Stored answers served back, so no model is called: `kind: replay` serves a `--record` directory
(a matrix re-runs with no server), and `ReplayBackend.of_run` one run record's completions (`evalkit
rescore` and `sim fit` re-run the agent loop on them).

    backends:
      - {label: smollm2, kind: replay, model: smollm2, options: {dir: recordings/smollm2}}

`options.dir` is the directory `--record DIR` wrote for this backend's label (DIR/<label>),
relative to the current directory. Requests are looked up by the same key the recorder used; the
same request recorded several times (retries, or identical first calls of many runs) is served in
recorded order, preferring the recording made for the same run and call; an agent's call (one with
`CallContext.placeholders`) is served only its own run's and call's answer, its request compared with
the run's temporary folders and the date as placeholders (docs/agents.md, "Record and replay"). A request that was not
recorded raises `ReplayMiss` naming the run, the call and, when that call was recorded with another
request, the first JSON path where the two differ: a changed nudge or grammar is a clear miss,
never a wrong answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.backends.base import UNSATISFIABLE, Feature
from evalkit.backends.recording import PROVENANCE_FILE, RECORDINGS_FILE, request_document, request_key
from evalkit.backends.settings import BackendSettings
from evalkit.chat import CallContext, ChatRequest, Completion
from evalkit.errors import BackendError, ConfigError, ReplayMiss, UnsupportedFeature
from evalkit.results.records import RunRecord

if TYPE_CHECKING:
    import httpx

__all__ = ["Observer", "ReplayBackend", "first_difference", "last_attempts"]

# what `of_run` calls with each answered call: the request, where the run stands, the stored answer
Observer = Callable[[ChatRequest, CallContext, Completion], None]


@dataclass(order=True)
class _Entry:
    run_id: str
    call_index: int
    line: int
    key: str = field(compare=False)
    request: dict[str, Any] = field(compare=False, repr=False)
    outcome: dict[str, Any] = field(compare=False, repr=False)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def first_difference(recorded: Any, new: Any, path: str = "") -> str | None:
    """The first JSON path where two documents differ, as `messages[3].content differs (...)`."""
    where = path or "request"
    if isinstance(recorded, dict) and isinstance(new, dict):
        for key in sorted(recorded.keys() | new.keys()):
            sub = f"{path}.{key}" if path else str(key)
            if key not in new:
                return f"{sub} was recorded but is missing now"
            if key not in recorded:
                return f"{sub} is new (not in the recording)"
            found = first_difference(recorded[key], new[key], sub)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(new, list):
        for i, (a, b) in enumerate(zip(recorded, new, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(recorded) != len(new):
            return f"{where} has {len(new)} items, the recording {len(recorded)}"
        return None
    if recorded != new or type(recorded) is not type(new):
        return f"{where} differs (recorded {_short(recorded)}, now {_short(new)})"
    return None


def _read_entries(path: Path) -> list[_Entry]:
    entries = []
    with path.open(encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if not text.strip():
                continue
            try:
                doc = json.loads(text)
                outcome = {k: doc[k] for k in ("completion", "error") if k in doc}
                entries.append(
                    _Entry(str(doc["run_id"]), int(doc["call_index"]), number, str(doc["key"]), doc["request"], outcome)
                )
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                if number == 1 or text.endswith("\n"):  # only a last line cut short is forgiven
                    raise ConfigError(f"{path}:{number}: not a recording line ({exc})") from exc
    return entries


def last_attempts(entries: list[_Entry]) -> list[_Entry]:
    """Each run's calls from its last attempt only.

    A run cut off by an interrupt and run again on resume starts over at call 0; its first attempt's
    calls may still be in the file (recorded before `--resume` pruned them). A new attempt begins
    where call 0 follows an answered call or a later call of the same run; a call retried after a
    backend error (error, then answer, same index) stays in one attempt.
    """
    by_run: dict[str, list[_Entry]] = {}
    for item in sorted(entries, key=lambda e: e.line):
        calls = by_run.setdefault(item.run_id, [])
        if calls and item.call_index == 0 and (calls[-1].call_index > 0 or "completion" in calls[-1].outcome):
            calls.clear()
        calls.append(item)
    return [item for calls in by_run.values() for item in calls]


def _load_provenance(directory: Path) -> dict[str, Any]:
    path = directory / PROVENANCE_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"replay: cannot read {path}: {exc}") from exc
    if not isinstance(doc, dict) or "kind" not in doc or "model" not in doc:
        raise ConfigError(f"replay: {path} is not a recording's provenance file")
    return doc


class ReplayBackend:
    """Answers model calls from stored answers and never calls a model. Two stores:

    - a `--record` directory (`kind: replay`): each request is looked up by its key, recorded errors
      are raised again, and a request that was not recorded is a `ReplayMiss` naming what changed;
    - one run record's completions (`ReplayBackend.of_run`: `evalkit rescore` and `sim fit`): served
      in call order whatever the request now is (a changed guard re-judges the same answers), and a
      call beyond them is a `ReplayMiss` (the current loop needs a model call that was never made).
    """

    kind: ClassVar[str] = "replay"
    speaks_http: ClassVar[bool] = False
    key_env: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        entry: BackendSettings | None = None,
        client: httpx.AsyncClient | None = None,
        api_key: str | None = None,
        run: RunRecord | None = None,
        observe: Observer | None = None,
    ):
        self.directory: Path | None = None
        self._in_order: list[Completion] | None = None
        self._observe = observe
        self._queues: dict[str, list[_Entry]] = {}
        self._by_call: dict[tuple[str, int], list[_Entry]] = {}
        if run is not None:
            self.provenance: dict[str, Any] = {"kind": self.kind, "model": run.cell.model}
            self.provenance["replayed_from"] = f"run {run.run_id}"
            self.recorded_kind, self.model, self.simulated = run.cell.backend, run.cell.model, run.simulated
            self._in_order = [call.completion for call in run.calls]
        elif entry is not None:
            self._load_recording(entry)
        else:
            raise TypeError("ReplayBackend needs a backend entry (kind: replay) or a run record")

    @classmethod
    def of_run(cls, run: RunRecord, observe: Observer | None = None) -> ReplayBackend:
        """A backend answering one run's calls with its stored completions, in order; `observe` sees
        each call as it is answered (the request, where the run stands, the answer)."""
        return cls(run=run, observe=observe)

    def _load_recording(self, entry: BackendSettings) -> None:
        if not entry.options.get("dir"):
            raise ConfigError(f"backend {entry.label!r}: kind replay needs options.dir (a --record directory)")
        self.directory = Path(str(entry.options["dir"])).resolve()
        self.provenance = _load_provenance(self.directory)
        self.recorded_kind = str(self.provenance["kind"])
        self.model = str(self.provenance["model"])
        self.simulated = bool(self.provenance.get("simulated", False))
        recordings = self.directory / RECORDINGS_FILE
        if not recordings.is_file():
            raise ConfigError(f"replay: {recordings} does not exist")
        for item in sorted(last_attempts(_read_entries(recordings))):
            self._queues.setdefault(item.key, []).append(item)
            self._by_call.setdefault((item.run_id, item.call_index), []).append(item)

    def supports(self, feature: Feature) -> bool:
        if self._in_order is not None:  # the run was made, so its cell's features were there
            return feature not in UNSATISFIABLE
        return bool((self.provenance.get("supports") or {}).get(feature, False))

    async def describe(self) -> dict[str, Any]:
        if self.directory is None:
            return dict(self.provenance)
        recorded = self.provenance.get("describe") or {"kind": self.recorded_kind, "model": self.model}
        return {**recorded, "replayed_from": str(self.directory)}

    async def aclose(self) -> None:
        return None

    def _take(self, key: str, context: CallContext) -> _Entry | None:
        queue = self._queues.get(key)
        if not queue:
            return None
        for i, item in enumerate(queue):
            if (item.run_id, item.call_index) == (context.run_id, context.call_index):
                return queue.pop(i)
        # an agent's call (it has placeholders) is only ever its own run's and call's recorded answer
        return None if context.placeholders else queue.pop(0)

    def _miss(self, key: str, request: ChatRequest, context: CallContext) -> ReplayMiss:
        where = f"replay {self.directory}: run {context.run_id} call {context.call_index}"
        recorded = self._by_call.get((context.run_id, context.call_index))
        mine = any(item.key == key for item in recorded or [])  # an agent's call is matched by run and call
        if key in self._queues and (mine or not context.placeholders):
            why = "this request was recorded, but every recorded answer to it has been replayed already"
        elif recorded:
            why = "the request changed since recording: " + (
                first_difference(recorded[0].request, request_document(request, context.placeholders)) or "it differs"
            )
        else:
            why = "no request was recorded for this run and call"
        return ReplayMiss(f"{where}: {why} (record again with --record)")

    def _next_in_order(self, request: ChatRequest, context: CallContext) -> Completion:
        assert self._in_order is not None
        if context.call_index >= len(self._in_order):
            raise ReplayMiss(
                f"run {context.run_id}: the current loop needs more model calls than the "
                f"{len(self._in_order)} recorded; re-run it instead"
            )
        completion = self._in_order[context.call_index]
        if self._observe is not None:
            self._observe(request, context, completion)
        return completion

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        if self._in_order is not None:
            return self._next_in_order(request, context)
        key = request_key(self.recorded_kind, self.model, request, context.placeholders)
        item = self._take(key, context)
        if item is None:
            raise self._miss(key, request, context)
        if "completion" in item.outcome:
            return Completion.model_validate(item.outcome["completion"])
        error = item.outcome.get("error") or {}
        cls = UnsupportedFeature if error.get("unsupported") else BackendError
        raise cls(
            str(error.get("message", "recorded backend error")),
            retryable=bool(error.get("retryable")),
            status=error.get("status"),
        )
