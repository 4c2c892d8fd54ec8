"""The "Writing a backend" steps (docs/backends.md), followed once in a copy of the package: its example module
saved where it says, its class registered in `evalkit/backends/__init__.py`, and nothing else. The
new kind is then listed, accepted by a config entry, built with an HTTP client and its key, and
calls its default url; left out of the list, it fails the collection of the registry test."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "backends.md"


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def _example() -> tuple[str, str, str]:
    """The section's module: (its path in the package, its source, its class name)."""
    section = _section("Writing a backend")
    source = re.search(r"```python\n(.*?)```", section, re.S)
    assert source, "the section shows the module"
    path = re.search(r"\((evalkit/backends/\w+\.py)\)", source.group(1))
    assert path, "the module's docstring names where it is saved"
    classes = [n.name for n in ast.parse(source.group(1)).body if isinstance(n, ast.ClassDef)]
    assert len(classes) == 1
    return path.group(1), source.group(1), classes[0]


def _copy(tmp_path: Path, *, register: bool) -> Path:
    """A copy of evalkit and its tests with the example module added, and (step 2) registered."""
    root = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "evalkit", root / "evalkit", ignore=ignore)
    shutil.copytree(ROOT / "tests", root / "tests", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    path, source, name = _example()
    (root / path).write_text(source, encoding="utf-8")
    if register:
        init = root / "evalkit" / "backends" / "__init__.py"
        text = init.read_text(encoding="utf-8")
        module = path.removesuffix(".py").replace("/", ".")
        text = text.replace(
            "\nfrom evalkit.errors import", f"\nfrom {module} import {name}\nfrom evalkit.errors import", 1
        )
        listed = re.search(r"BACKENDS: dict\[str, BackendKind\] = registry\(\n    \[\n(.*?)\n    \]", text, re.S)
        assert listed, "the list BACKENDS is built from"
        text = text[: listed.end(1)] + f"\n        {name}," + text[listed.end(1) :]
        init.write_text(text, encoding="utf-8")
    return root


def _python(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env={**base, **(env or {})}, capture_output=True, text=True, check=False
    )


_USE = """
import asyncio, json, httpx
from evalkit.backends import create_backend, needs_http_client
from evalkit.backends.entry import BackendEntry
from evalkit.errors import ConfigError
from tests.backends import CONTEXT, payload, request
import tests.backends.test_registry  # its collection check passes

entry = BackendEntry(label="new", kind="groq", model="llama-3.1-8b-instant")
seen = []

def answer(req):
    seen.append({"url": str(req.url), "auth": req.headers.get("authorization")})
    return httpx.Response(200, json=payload("openai", "text"))

try:
    create_backend(entry, httpx.AsyncClient(transport=httpx.MockTransport(answer)))
    unset = None
except ConfigError as exc:
    unset = str(exc)
"""

_CALL = """
backend = create_backend(entry, httpx.AsyncClient(transport=httpx.MockTransport(answer)))
done = asyncio.run(backend.complete(request(), CONTEXT))
print(json.dumps({"unset": unset, "http": needs_http_client("groq"), "seen": seen, "text": done.text}))
"""


def test_the_readme_steps_add_a_kind(tmp_path: Path) -> None:
    root = _copy(tmp_path, register=True)
    listed = _python(root, "-m", "evalkit", "list", "backends")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^  groq +evalkit\.backends\.groq +\(HTTP; key from \$GROQ_API_KEY", listed.stdout, re.M)

    without_key = _python(root, "-c", _USE + "print(json.dumps(unset))")
    assert without_key.returncode == 0, without_key.stderr[-2000:]
    assert "environment variable GROQ_API_KEY is not set" in json.loads(without_key.stdout)

    used = _python(root, "-c", _USE + _CALL, env={"GROQ_API_KEY": "gsk-test-0123"})
    assert used.returncode == 0, used.stderr[-2000:]
    report = json.loads(used.stdout)
    assert report["http"] is True
    assert report["seen"] == [
        {"url": "https://api.groq.com/openai/v1/chat/completions", "auth": "Bearer gsk-test-0123"}
    ]
    assert report["text"]


def test_a_kind_left_out_of_the_list_fails_the_collection(tmp_path: Path) -> None:
    root = _copy(tmp_path, register=False)
    done = _python(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/backends/test_registry.py")
    assert done.returncode != 0
    assert "backend classes not in evalkit.backends.BACKENDS: evalkit.backends.groq.GroqBackend" in done.stdout
    unknown = _python(
        root, "-c", "from evalkit.backends.entry import BackendEntry; BackendEntry(label='g', kind='groq', model='m')"
    )
    assert "unknown backend kind 'groq'" in unknown.stderr


@pytest.mark.parametrize("declaration", ["kind", "speaks_http"])
def test_a_half_declared_class_fails_at_import(tmp_path: Path, declaration: str) -> None:
    """A class registered without one of its declarations: importing evalkit.backends fails, naming it."""
    root = _copy(tmp_path, register=True)
    module = root / "evalkit" / "backends" / "groq.py"
    source = module.read_text(encoding="utf-8")
    if declaration == "kind":  # the inherited kind: two classes would give 'openai'
        module.write_text(source.replace('    kind = "groq"\n', ""), encoding="utf-8")
        said = "backend kind 'openai' is declared by evalkit.backends.openai.OpenAIBackend and evalkit.backends.groq."
    else:  # a class that is no HttpBackend and says nothing of HTTP
        module.write_text(
            source.replace("(OpenAIBackend)", "").replace("from evalkit.backends.openai import OpenAIBackend\n", ""),
            encoding="utf-8",
        )
        said = "backend class evalkit.backends.groq.GroqBackend does not declare speaks_http"
    done = _python(root, "-c", "import evalkit.backends")
    assert done.returncode != 0
    assert said in done.stderr
