"""Every shell block of the README and of the pages under docs/ runs as written, in order (the README,
then the pages in mkdocs.yml's nav order), in a fresh copy of the repository.

The blocks share one copy, as a reader's clone would: a later block may read what an earlier one
wrote. Annotations (tests/integration/readme_blocks.py) mark the blocks that need a real
llama-server, take minutes (`-m slow`), or are never run here.

Two environments. By default the blocks run in the test's own (a dev install), which is quick but
has more installed than command 1 gives a reader: a block's install of an extra of the checkout is
left out and the block runs only when the extra is there. `-m slow` also runs every block, as
written, in a fresh venv that command 1 alone made (its `pip install -e .` takes about a minute and
a half): that is what catches a block that needs a package command 1 does not install.
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

from tests.extras import extra_of, missing_of_extra, needs_extra
from tests.integration.conftest import require_llama_server
from tests.integration.readme_blocks import (
    INSTALL_PREFIX,
    Block,
    copy_repo,
    doc_blocks,
    evalkit_shim,
    without_extra_installs,
)

BLOCKS = doc_blocks()


def _params() -> Iterator[object]:
    for block in BLOCKS:
        if block.kind == "skip":
            yield pytest.param(block, id=block.name, marks=pytest.mark.skip(reason=f"{block.page}: {block.arg}"))
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
def committed(clone: Path) -> dict[str, bytes]:
    return snapshot(clone)


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
    block: Block,
    clone: Path,
    committed: dict[str, bytes],  # taken before the first block runs
    env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    request,
) -> None:  # type: ignore[no-untyped-def]
    script, cwd, timeout = block.script, clone, 900.0
    if block.kind == "needs" and importlib.util.find_spec(block.arg) is None:
        extra = extra_of(block.arg)
        pytest.skip(f"{block.page} line {block.line}: " + (needs_extra(extra) if extra else f"needs {block.arg}"))
    script, extras = without_extra_installs(script)
    for extra in extras:
        if missing_of_extra(extra):
            pytest.skip(f"{block.page} line {block.line}: " + needs_extra(extra))
    if block.kind == "server":
        require_llama_server()
        timeout = 3600.0
    if block.kind == "install":
        assert INSTALL_PREFIX in script, f"{block.page} line {block.line}: the install block changed"
        if request.node.callspec.id.endswith("fresh-install"):
            cwd = copy_repo(tmp_path_factory.mktemp("fresh"))
        else:
            script = script.replace(INSTALL_PREFIX, "")
    done = run_block(script, cwd, env, timeout)
    assert done.returncode == 0, (
        f"{block.page} line {block.line} ({block.name}) exited {done.returncode}\n"
        f"--- script\n{script}\n--- stdout (tail)\n{done.stdout[-3000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}"
    )


def snapshot(clone: Path) -> dict[str, bytes]:
    """The copy's committed files and their content, before any block ran; `git init` there, so that
    git reads the copy's own .gitignore (nothing is added: the snapshot is the reference)."""
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    return {str(p.relative_to(clone)): p.read_bytes() for p in _files(clone)}


def _files(clone: Path) -> list[Path]:
    return sorted(p for p in clone.rglob("*") if p.is_file() and ".git" not in p.relative_to(clone).parts)


def left_behind(clone: Path, committed: dict[str, bytes]) -> list[str]:
    """What the blocks left in `clone` that `git status` would show: files neither committed (with
    their committed content) nor ignored by the copy's .gitignore."""
    changed, new = [], []
    for path in _files(clone):
        name = str(path.relative_to(clone))
        if name not in committed:
            new.append(name)
        elif committed[name] != path.read_bytes():
            changed.append(f"modified: {name}")
    check = ["git", "check-ignore", "--no-index", "--stdin"]
    ignored = subprocess.run(check, cwd=clone, input="\n".join(new), capture_output=True, text=True).stdout.splitlines()
    return changed + [f"untracked: {name}" for name in sorted(set(new) - set(ignored))]


def test_the_blocks_leave_git_status_clean(clone: Path, committed: dict[str, bytes]) -> None:
    """Run after every block (the module's clone is theirs): each file a block wrote is committed,
    with the content committed, or ignored (issue 38: 19 untracked paths and 4 rewritten reports)."""
    left = left_behind(clone, committed)
    assert left == [], f"{len(left)} paths: {left[:30]}"


# what the fresh environment runs: the blocks that need nothing beyond what they install themselves
_FRESH_KINDS = ("", "install", "needs")


@pytest.mark.slow
def test_readme_blocks_run_in_a_fresh_command_1_environment(tmp_path: Path) -> None:
    """Command 1 makes `.venv` in a fresh copy; every later block runs in it as written, in order
    (a `needs MODULE` block installs MODULE itself; `server`, `slow` and `skip` blocks say why not)."""
    clone = copy_repo(tmp_path / "clone")
    committed = snapshot(clone)
    ours = str(Path(sys.executable).parent)
    path = [str(clone / ".venv" / "bin"), *(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != ours)]
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"PATH": os.pathsep.join(path)}
    env["VIRTUAL_ENV"] = str(clone / ".venv")
    ran = []
    for block in BLOCKS:
        if block.kind not in _FRESH_KINDS:
            continue
        done = run_block(block.script, clone, env, 900.0)
        assert done.returncode == 0, (
            f"{block.page} line {block.line} ({block.name}), in the fresh environment, exited {done.returncode}\n"
            f"--- stdout (tail)\n{done.stdout[-3000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}"
        )
        assert "Traceback" not in done.stderr, f"{block.page} line {block.line}: {done.stderr[-3000:]}"
        # a BFCL case left out for a package the block did not install (mpmath: issue 31)
        assert "cannot be imported" not in done.stdout + done.stderr, (
            f"{block.page} line {block.line}: {done.stdout[-3000:]}"
        )
        ran.append(block.name)
    assert ran and ran[0] == BLOCKS[0].name, "command 1 ran first"
    assert left_behind(clone, committed) == []
