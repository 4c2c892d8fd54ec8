"""Every shell block of the README runs as written, in order, in a fresh copy of the repository.

The blocks share one copy, as a reader's clone would: a later block may read what an earlier one
wrote. Annotations (tests/integration/readme_blocks.py) mark the blocks that need a real
llama-server, take minutes (`-m slow`), or are never run here.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.extras import extra_of, needs_extra
from tests.integration.conftest import require_llama_server
from tests.integration.readme_blocks import INSTALL_PREFIX, README, Block, copy_repo, evalkit_shim, readme_blocks

BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _params() -> Iterator[object]:
    for block in BLOCKS:
        if block.kind == "skip":
            yield pytest.param(block, id=block.name, marks=pytest.mark.skip(reason=f"README: {block.arg}"))
        elif block.kind == "slow":
            yield pytest.param(block, id=block.name, marks=pytest.mark.slow)
        elif block.kind == "server":
            yield pytest.param(block, id=block.name, marks=pytest.mark.server)
        elif block.kind == "install":
            yield pytest.param(block, id=block.name)
            yield pytest.param(block, id=f"{block.name}-fresh-install", marks=pytest.mark.slow)
        else:
            yield pytest.param(block, id=block.name)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repo(tmp_path_factory.mktemp("clone"))


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    shim = evalkit_shim(tmp_path_factory.mktemp("bin"))
    path = os.pathsep.join([str(shim), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    out = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS"}}
    if not any(e.name == "evalkit" for e in entry_points(group="pytest11")):  # a checkout not reinstalled
        out["PYTEST_PLUGINS"] = "evalkit.integrations.pytest_plugin"
    return {**out, "PATH": path}


def run_block(script: str, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize("block", list(_params()))
def test_readme_block_runs_as_written(
    block: Block, clone: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory, request
) -> None:  # type: ignore[no-untyped-def]
    script, cwd, timeout = block.script, clone, 900.0
    if block.kind == "needs" and importlib.util.find_spec(block.arg) is None:
        extra = extra_of(block.arg)
        pytest.skip(f"README line {block.line}: " + (needs_extra(extra) if extra else f"needs {block.arg}"))
    if block.kind == "server":
        require_llama_server()
        timeout = 3600.0
    if block.kind == "install":
        assert INSTALL_PREFIX in script, f"README line {block.line}: the install block changed"
        if request.node.callspec.id.endswith("fresh-install"):
            cwd = copy_repo(tmp_path_factory.mktemp("fresh"))
        else:
            script = script.replace(INSTALL_PREFIX, "")
    done = run_block(script, cwd, env, timeout)
    assert done.returncode == 0, (
        f"README line {block.line} ({block.name}) exited {done.returncode}\n"
        f"--- script\n{script}\n--- stdout (tail)\n{done.stdout[-3000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}"
    )
