"""`${NAME}` and `${NAME:-default}` in a phase's `venv` or `python`: one config runs against several
installs of a guard library (the Forge upgrade gate), with the config and its hash unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from evalkit.backends.phase_config import PhaseSettings, expand_env
from evalkit.run.config import load_config

ROOT = Path(__file__).resolve().parents[2]


def test_variables_are_filled_in_with_their_defaults() -> None:
    text = "../.forge/${FORGE_VERSION:-0.10.0}"
    assert expand_env(text, "venv", {}) == "../.forge/0.10.0"
    assert expand_env(text, "venv", {"FORGE_VERSION": "0.7.3"}) == "../.forge/0.7.3"
    assert expand_env(text, "venv", {"FORGE_VERSION": ""}) == "../.forge/0.10.0"  # empty is unset, as in sh
    assert expand_env("${A}/${B:-b}", "python", {"A": "a"}) == "a/b"
    assert expand_env("no/variables", "venv", {}) == "no/variables"
    with pytest.raises(ValueError, match=r"^venv: environment variable V is not set \(or give a default"):
        expand_env("x/${V}", "venv", {})


@pytest.mark.parametrize("venv", ["x/$V", "x/${V", "x/${1V}", "x/$"])
def test_a_variable_not_written_as_one_is_refused(venv: str) -> None:
    with pytest.raises(ValidationError, match=r"write an environment variable as"):
        PhaseSettings.model_validate({"venv": venv, "command": ["-m", "x"]})


def _config(tmp_path: Path, venv: str) -> Path:
    for version in ("1.0", "2.0"):
        bin_dir = tmp_path / "venvs" / version / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        if not (bin_dir / "python").exists():
            (bin_dir / "python").symlink_to(sys.executable)
    path = tmp_path / "c.yaml"
    path.write_text(
        f"""name: c
scenarios: ["{ROOT}/scenarios/casual_greeting/hi.yaml"]
backends:
  - label: proxied
    kind: openai
    model: small-local
    serve:
      phases:
        - {{name: model, command: ["{{python}}", -m, evalkit, serve, sim, --port, "{{port}}"]}}
        - {{name: proxy, venv: "{venv}", command: [-m, http.server, "{{port}}"], ready: /}}
strategies: {{trust_text: [trust_text]}}
""",
        encoding="utf-8",
    )
    return path


def _evalkit(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "V"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, env={**clean, **env}
    )


def _validate(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _evalkit("validate", str(path), **env)


def _refused_run(path: Path, **env: str) -> str:
    """`evalkit run` refuses before it starts anything or writes a file: exit 2, one line."""
    out = path.parent / "out.jsonl"
    done = _evalkit("run", str(path), "-o", str(out), **env)
    assert done.returncode == 2 and not out.exists(), done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_the_venv_follows_the_variable_and_the_config_stays_the_same(tmp_path: Path) -> None:
    path = _config(tmp_path, "venvs/${V:-1.0}")
    assert _validate(path).returncode == 0
    assert _validate(path, V="2.0").returncode == 0
    line = _refused_run(path, V="3.0")
    assert "c.yaml: backends.0.serve.phases.1.venv:" in line and "venvs/3.0 is not there" in line
    # the stored config keeps the variable: both installs run the same config, hash and labels
    assert load_config(path).backends[0].serve.phases[1].venv == "venvs/${V:-1.0}"  # type: ignore[union-attr,index]


def test_a_variable_without_a_default_must_be_set(tmp_path: Path) -> None:
    path = _config(tmp_path, "venvs/${V}")
    line = _refused_run(path)
    assert "phases.1.venv: environment variable V is not set" in line
    assert _validate(path, V="1.0").returncode == 0


@pytest.mark.parametrize("value", ["../../tmp/x", "..", "1.0/../../x", "..\\x"])
def test_a_variable_that_climbs_out_of_its_folder_is_refused(value: str) -> None:
    # FORGE_VERSION='../../tmp/x' would make `../.forge/${FORGE_VERSION}` a venv outside .forge/
    with pytest.raises(ValueError, match=r"^venv: environment variable FORGE_VERSION="):
        expand_env("../.forge/${FORGE_VERSION:-0.10.0}", "venv", {"FORGE_VERSION": value})
    assert expand_env("../.forge/${FORGE_VERSION:-0.10.0}", "venv", {"FORGE_VERSION": "0.7.3"}) == "../.forge/0.7.3"


def test_a_run_with_a_variable_that_climbs_out_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _config(tmp_path, "venvs/${V:-1.0}")
    (tmp_path / "outside" / "bin").mkdir(parents=True)
    (tmp_path / "outside" / "bin" / "python").symlink_to(sys.executable)
    line = _refused_run(path, V="../outside")
    assert "c.yaml: backends.0.serve.phases.1.venv: environment variable V='../outside' names a folder outside" in line
