"""Open an HTML file in Debian's headless Chromium: console errors, requests, DOM facts, screenshots.

`load` drives Chromium over the DevTools protocol on `--remote-debugging-pipe` (file descriptors 3
and 4, NUL-separated JSON), so it needs nothing but the standard library. It collects everything a
reader would see as an error: `console.error`/`console.assert` calls, uncaught exceptions,
error-level log entries (a resource that failed to load, a blocked request) and JavaScript dialogs
(an `alert` that ran), plus every URL the page requested. `screenshot` uses Chromium's own
`--screenshot` flag, for a human to look at.

    page = load(Path("reports/default.html"), probe="document.title")
    assert not page.errors and not page.external_requests
    screenshot(Path("reports/default.html"), Path("tests/artifacts/report.png"))
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM", "FLAGS", "BrowserError", "PageLoad", "chromium_path", "load", "screenshot"]

CHROMIUM = "/usr/bin/chromium"  # Debian's package (scripts/install-chromium.sh)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_TIMEOUT_S = 60.0  # a guard against a hung browser, not an assertion about speed


class BrowserError(RuntimeError):
    """Chromium could not be started, or did not answer."""


def chromium_path() -> str | None:
    """Debian's chromium, else one on PATH, else None."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


def skip_without_chromium() -> None:
    """For a browser test's fixture: skip where chromium is missing, but fail under CI, which installs
    it (scripts/install-chromium.sh): a browser test that silently never runs there proves nothing."""
    import pytest

    if chromium_path() is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed and CI is set: run scripts/install-chromium.sh (as root)")
        pytest.skip("chromium is not installed (bash scripts/install-chromium.sh)")


def _require() -> str:
    path = chromium_path()
    if path is None:
        raise BrowserError("chromium is not installed (bash scripts/install-chromium.sh)")
    return path


@dataclass
class PageLoad:
    url: str
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, error log entries, dialogs
    messages: list[str] = field(default_factory=list)  # every console call and log entry, "level: text"
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, the page itself included
    value: Any = None  # what the probe expression returned
    stderr: str = ""  # Chromium's own log, for diagnosing a failure

    @property
    def external_requests(self) -> list[str]:
        """Requests for anything but the page itself and inline data: a self-contained page has none."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]


_TRAMPOLINE = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"
)


def _above(fd: int, lowest: int) -> int:
    """A copy of `fd` numbered `lowest` or higher; the original is closed."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)
    os.close(fd)
    return copy


class _Pipe:
    """A Chromium process and its DevTools pipe (we write on its fd 3, read its fd 4)."""

    def __init__(self, args: list[str], stderr: Any):
        to_child, self._to = os.pipe()
        self._from, from_child = os.pipe()
        # above 4, so that putting them on 3 and 4 cannot overwrite one with the other
        to_child, from_child = _above(to_child, 10), _above(from_child, 10)
        # a small trampoline puts our two pipe ends on the descriptors Chromium expects, then execs it
        # (dash, Debian's /bin/sh, cannot redirect descriptors above 9)
        self.process = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(to_child), str(from_child), *args],
            pass_fds=(to_child, from_child),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to, json.dumps(message).encode() + b"\0")
        return self._next_id

    def receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise BrowserError("chromium did not answer on the DevTools pipe in time")
            chunk = os.read(self._from, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium closed the DevTools pipe (exit code {self.process.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if message.get("method") == "Page.javascriptDialogOpening":  # an open dialog would block the page
            self.send("Page.handleJavaScriptDialog", {"accept": False}, message.get("sessionId"))
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = _TIMEOUT_S
    ) -> dict[str, Any]:
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self.receive(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = _TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self.receive(deadline))

    def close(self) -> None:
        with contextlib.suppress(OSError, BrowserError):
            self.send("Browser.close")
        for fd in (self._to, self._from):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        # Chromium's helper processes share the session we started it in: end that group (ours only)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def _describe(event: dict[str, Any]) -> tuple[str, str] | None:
    """(level, text) of a console call, exception, log entry or dialog; None for other events."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled":
        text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
        return params.get("type", "log"), text
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return "error", str(details.get("exception", {}).get("description") or details.get("text"))
    if method == "Log.entryAdded":
        entry = params.get("entry", {})
        return entry.get("level", "info"), f"{entry.get('text', '')} {entry.get('url', '')}".strip()
    if method == "Page.javascriptDialogOpening":
        return "error", f"{params.get('type')} dialog: {params.get('message')}"
    return None


_ERROR_LEVELS = {"error", "assert"}


def load(
    html: Path,
    probe: str | None = None,
    *,
    width: int = 1280,
    height: int = 2000,
    timeout: float = _TIMEOUT_S,
    fragment: str = "",
    media: str = "",
) -> PageLoad:
    """Open `html` (at `fragment`, e.g. "#d-r3-c0") in a fresh headless Chromium, wait for its load
    event, evaluate `probe` (a JavaScript expression whose value must be JSON-serialisable) and return
    what happened. `media` "print" lays the page out as printed (its `@media print` rules)."""
    binary = _require()
    url = html.resolve().as_uri() + fragment
    page = PageLoad(url=url)
    with tempfile.TemporaryDirectory(prefix="evalkit-chromium-") as tmp:
        log_path = Path(tmp) / "stderr.log"
        with open(log_path, "w+b") as log:
            pipe = _Pipe(
                [
                    binary,
                    *FLAGS,
                    f"--user-data-dir={tmp}/profile",
                    f"--window-size={width},{height}",
                    "--remote-debugging-pipe",
                    "about:blank",
                ],
                log,
            )
            try:
                target = pipe.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
                session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
                for domain in ("Page", "Runtime", "Log", "Network"):
                    pipe.call(f"{domain}.enable", {}, session)
                if media:
                    pipe.call("Emulation.setEmulatedMedia", {"media": media}, session)
                pipe.call("Page.navigate", {"url": url}, session)
                pipe.wait_for("Page.loadEventFired", timeout)
                if probe is not None:
                    reply = pipe.call("Runtime.evaluate", {"expression": probe, "returnByValue": True}, session)
                    if "exceptionDetails" in reply:
                        raise BrowserError(f"probe failed: {reply['exceptionDetails']}")
                    page.value = reply.get("result", {}).get("value")
                else:  # a round trip, so that events sent during the load have arrived
                    pipe.call("Runtime.evaluate", {"expression": "0"}, session)
            finally:
                pipe.close()
            log.seek(0)
            page.stderr = log.read().decode("utf-8", "replace")
    for event in pipe.events:
        if event.get("method") == "Network.requestWillBeSent":
            page.requests.append(event["params"]["request"]["url"])
        described = _describe(event)
        if described is not None:
            level, text = described
            page.messages.append(f"{level}: {text}")
            if level in _ERROR_LEVELS:
                page.errors.append(f"{level}: {text}")
    return page


def screenshot(html: Path, png: Path, *, width: int = 1280, height: int = 2000, timeout: float = _TIMEOUT_S) -> Path:
    """Save what the top `width`×`height` pixels of `html` look like in Chromium as a PNG."""
    binary = _require()
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="evalkit-chromium-") as tmp:
        args = [
            binary,
            *FLAGS,
            f"--user-data-dir={tmp}/profile",
            f"--screenshot={png.resolve()}",
            f"--window-size={width},{height}",
            "--hide-scrollbars",
            html.resolve().as_uri(),
        ]
        process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise BrowserError(f"chromium --screenshot did not finish in {timeout:.0f} s") from None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # helper processes it may have left behind
    if not png.is_file():
        raise BrowserError(
            f"chromium wrote no screenshot (exit code {process.returncode}): "
            f"{(out + err).decode('utf-8', 'replace')[-2000:]}"
        )
    return png
