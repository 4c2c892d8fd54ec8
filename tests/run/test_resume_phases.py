"""A resume never mixes the code of a server phase (issue 38, item 2): a resume whose phase runs
other packages, other versions of them or another command than the runs already in the file is
refused in one line (exit 2) and the file is left as it was; the same install resumes. An
interrupted run's resume hint repeats the environment variables the config's phases read
(FORGE_VERSION=0.7.3 evalkit run ... --resume), and never an API key."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli.run_cmd import add_arguments, config_variables, resume_command
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from tests.fake_wheel import fake_wheel

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "tests/data/scenarios/e2e_hi.yaml"


def _venv(folder: Path, version: str) -> None:
    """A venv with evalkit's packages (through a .pth) and a fake forge-guardrails VERSION of its own."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = (folder / "lib").glob("python3.*/site-packages")
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "pydantic").is_dir())
    (site / "_evalkit.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    wheel = fake_wheel(folder / "wheel", version)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site)]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("resume")
    for version in ("1.0", "2.0"):
        _venv(folder / "venvs" / version, version)
    path = folder / "c.yaml"
    path.write_text(
        f"""name: c
seed: 1
runs: 1
scenarios: ["{SCENARIO}"]
backends:
  - label: served
    kind: openai
    model: small-local
    serve:
      phases:
        - name: model
          venv: "venvs/${{V:-1.0}}"
          command: [-m, evalkit, serve, sim, --model, small-local, --port, "{{port}}"]
          packages: [forge-guardrails]
strategies: {{trust_text: [trust_text]}}
""",
        encoding="utf-8",
    )
    return path


def _evalkit(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "V"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        capture_output=True,
        text=True,
        env={**clean, **env},
        cwd=ROOT,
        timeout=300,
    )


def test_a_resume_under_another_release_is_refused_and_the_same_one_resumes(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "mix.jsonl"
    first = _evalkit("run", config, "-o", out, V="2.0")
    assert first.returncode == 0, first.stderr
    before = out.read_bytes()
    mixed = _evalkit("run", config, "-o", out, "--resume", "-n", "2")  # without V: the default, 1.0
    assert mixed.returncode == 2, mixed.stderr
    (line,) = mixed.stderr.strip().splitlines()[-1:]
    assert (
        line.startswith(f"evalkit: error: {out}: backend 'served', phase 'model': ") and "Traceback" not in mixed.stderr
    )
    assert "forge-guardrails 2.0 in the runs already in the file, 1.0 now" in line
    assert "resume with the same install, or write a new file (-o)" in line
    assert out.read_bytes() == before  # no header, no run, no footer added
    same = _evalkit("run", config, "-o", out, "--resume", "-n", "2", V="2.0")
    assert same.returncode == 0, same.stderr
    runs = load_results([out]).runs
    assert len(runs) == 2 and {r.index for r in runs} == {0, 1}


def test_a_resume_whose_phase_program_is_another_is_refused(config: Path, tmp_path: Path) -> None:
    """The same config, a program found in the venv the variable chooses: another command line."""
    for version in ("1.0", "2.0"):
        script = config.parent / "venvs" / version / "bin" / "simserve"
        script.write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -m evalkit serve sim "$@"\n')
        script.chmod(0o755)
    path = tmp_path / "p.yaml"
    path.write_text(
        config.read_text()
        .replace("command: [-m, evalkit, serve, sim,", "command: [simserve,")
        .replace("          packages: [forge-guardrails]\n", "")
    )
    (tmp_path / "venvs").symlink_to(config.parent / "venvs")
    out = tmp_path / "p.jsonl"
    assert _evalkit("run", path, "-o", out, V="2.0").returncode == 0
    done = _evalkit("run", path, "-o", out, "--resume", "-n", "2")
    assert done.returncode == 2
    assert "phase 'model': its venv was venvs/2.0 in the runs already in the file, venvs/1.0 now" in done.stderr
    assert _evalkit("run", path, "-o", out, "--resume", "-n", "2", V="2.0").returncode == 0


def _args(*words: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(words))


def test_the_resume_hint_repeats_the_variables_the_config_read() -> None:
    forge = load_config(ROOT / "configs/forge-sim.yaml")
    environ = {"FORGE_VERSION": "0.7.3", "OPENAI_API_KEY": "sk-secret", "V": "x"}
    assert config_variables(forge, environ) == {"FORGE_VERSION": "0.7.3"}
    assert config_variables(forge, {"FORGE_VERSION": ""}) == {}  # unset: the default, which a resume gets too
    args = _args("configs/forge-sim.yaml", "-o", "mix.jsonl")
    hint = resume_command(args, Path("mix.jsonl"), config_variables(forge, environ))
    assert hint == "FORGE_VERSION=0.7.3 evalkit run configs/forge-sim.yaml --resume -o mix.jsonl"
    odd = resume_command(args, Path("mix.jsonl"), {"FORGE_VERSION": "0.7.3 x"})
    assert odd.startswith("FORGE_VERSION='0.7.3 x' evalkit run")
    assert resume_command(args, Path("mix.jsonl")) == "evalkit run configs/forge-sim.yaml --resume -o mix.jsonl"


def test_the_stored_config_keeps_the_variable_not_its_value(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.jsonl"
    assert _evalkit("run", config, "-o", out, V="2.0").returncode == 0
    (header,) = load_results([out]).headers
    assert json.dumps(header.config).count("${V:-1.0}") == 1
    (phase,) = header.backends["served"]["started_by_evalkit"]["phases"]
    assert [(p["name"], p["version"]) for p in phase["packages"]] == [("evalkit", "0.1.0"), ("forge-guardrails", "2.0")]


def test_a_resume_of_the_in_process_forge_under_another_release_is_refused(tmp_path: Path) -> None:
    """The in-process `forge` guard: a file whose runs ran forge-guardrails 0.7.3 (its header says so)
    resumed by a venv with 0.10.0 is refused; needs a Forge venv (bash scripts/install-forge.sh)."""
    from tests.forge_env import forge_python, forge_version

    python = forge_python()
    path = tmp_path / "f.yaml"
    path.write_text(
        f"""name: f
seed: 1
runs: 1
scenarios: ["{SCENARIO}"]
backends: [{{label: sim, kind: sim, model: small-local}}]
strategies: {{forge: [forge]}}
""",
        encoding="utf-8",
    )
    out = tmp_path / "f.jsonl"

    def evalkit(*args: str | Path) -> subprocess.CompletedProcess[str]:
        words = [str(python), "-m", "evalkit", *map(str, args)]
        return subprocess.run(words, capture_output=True, text=True, cwd=ROOT, timeout=300)

    assert evalkit("run", path, "-o", out).returncode == 0
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    version = forge_version(python)
    assert header["guards"]["forge"]["version"] == version and header["guards"]["forge"]["files_sha256"]
    header["guards"]["forge"]["version"] = "0.0.1"  # as a run under another release wrote it
    out.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    done = evalkit("run", path, "-o", out, "--resume", "-n", "2")
    assert done.returncode == 2, done.stderr
    assert f"guard 'forge': forge-guardrails 0.0.1 in the runs already in the file, {version} now" in done.stderr
