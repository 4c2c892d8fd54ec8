"""A run whose backend went down is no measurement: when more of a backend's runs than the config's
`max_infra_error_rate` are infra errors, `run` exits 3 with one line, and the segment's footer says
`infra_errors`, not `complete` (the dead-model-server case: 939 of 960 runs infra errors read as a
complete run with exit 0). `--resume --retry-infra` then runs them again and completes the file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.cli import build_parser
from evalkit.cli.options import Range
from evalkit.errors import BackendError, TooManyInfraErrors
from evalkit.results.integrity import InfraCount, infra_excess
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig, load_config
from tests.run.test_server_phases import ROOT, SIM_PHASE, error_line, evalkit, stub_phase, write_config


def _counts(**runs: tuple[int, int]) -> dict[str, InfraCount]:
    counts = {}
    for label, (total, infra) in runs.items():
        count = counts[label] = InfraCount()
        for i in range(total):
            count.add("infra_error" if i < infra else "final_answer", f"down {label}\nmore" if i < infra else None)
        count.add("unsupported", None)  # no verdict either way: not in the share
    return counts


def test_the_limit_is_a_share_of_each_backends_runs() -> None:
    assert infra_excess(_counts(a=(960, 939), b=(960, 0)), 0.1) == (
        "backend 'a': 939 infra errors in 960 runs, more than max_infra_error_rate 10% (the first: down a)"
    )
    assert infra_excess(_counts(a=(10, 1)), 0.1) is None  # at the limit, not past it
    assert infra_excess(_counts(a=(10, 2)), 0.1) is not None
    assert infra_excess(_counts(a=(10, 10)), 1.0) is None  # 1: never
    assert infra_excess(_counts(a=(10, 1)), 0.0) is not None  # 0: any infra error
    assert infra_excess(_counts(a=(0, 0)), 0.0) is None
    assert issubclass(TooManyInfraErrors, BackendError)  # exit 3, as a backend that cannot be used


def test_a_model_server_that_dies_mid_run_exits_3_and_the_footer_says_so(tmp_path: Path) -> None:
    fault = tmp_path / "fault"
    fault.write_text("")
    phase = stub_phase("--fault-file", str(fault))
    config = write_config(tmp_path, SIM_PHASE + phase, runs=25, concurrency=1)
    output = tmp_path / "a.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(config), "-o", str(output), "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not output.exists() or output.read_text().count('"type":"run"') < 2:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    fault.write_text("crash")  # from now on the server dies at every request: restarts run out
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err
    line = error_line(err)
    assert "infra errors in 100 runs, more than max_infra_error_rate 10%" in line
    assert "server phase 'stub' exited with code 3 mid-run" in line  # the first error says why
    assert f"--resume -o {output} --retry-infra" in line
    results = load_results([output])
    assert 0 < sum(r.counted for r in results.runs) < 100  # some runs were measured: not "every run failed"
    (footer,) = results.footers
    assert footer.status == "infra_errors" and footer.reason and footer.reason in line
    assert _incomplete(output, tmp_path) == [f"{output}: the run did not complete: {footer.reason} "]
    fault.write_text("")
    again = evalkit("run", config, "-o", output, "--resume", "--retry-infra")
    assert again.returncode == 0, again.stderr
    results = load_results([output])
    assert [f.status for f in results.footers] == ["infra_errors", "complete"]
    assert len(results.runs) == 100 and all(r.counted for r in results.runs)
    assert _incomplete(output, tmp_path) == []


def _incomplete(output: Path, tmp_path: Path) -> list[str]:
    """What a report's banner says is unfinished about the file (its JSON form)."""
    done = evalkit("report", output, "-o", tmp_path / "r.json", "--format", "json")
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads((tmp_path / "r.json").read_text())["incomplete"]
    return [why.split("(`run --resume --retry-infra`")[0] for why in found]


@pytest.mark.parametrize("limit", ["1", "-0.5", "x"])
def test_the_limit_is_an_option_checked_as_it_is_parsed(tmp_path: Path, limit: str) -> None:
    config = write_config(tmp_path, SIM_PHASE + stub_phase("--status-500"), runs=1, concurrency=1)
    done = evalkit("run", config, "-o", tmp_path / "a.jsonl", "--max-infra-error-rate", limit)
    if limit == "1":  # every run an infra error is still "every run of the backend failed": exit 3
        assert done.returncode == 3 and "every run failed (infra_error)" in error_line(done.stderr)
        footers = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()][-1:]
        assert footers[0]["status"] == "complete"  # 1: no share is past the limit
    else:
        assert done.returncode == 2 and "--max-infra-error-rate" in done.stderr and "Traceback" not in done.stderr


def test_the_limit_leaves_the_config_hash_alone() -> None:
    """It decides no run: a resume may change it, and the committed files' hashes hold."""
    config = load_config(ROOT / "configs/default.yaml")
    assert config.model_copy(update={"max_infra_error_rate": 0.5}).fingerprint() == config.fingerprint()


def test_the_option_has_the_range_of_the_config_field() -> None:
    run = next(
        a
        for a in build_parser("run")._subparsers._group_actions[0].choices["run"]._actions
        if "--max-infra-error-rate" in a.option_strings
    )
    assert isinstance(run.type, Range)
    bounds = {
        k: getattr(m, k)
        for m in RunConfig.model_fields["max_infra_error_rate"].metadata
        for k in ("ge", "le")
        if hasattr(m, k)
    }
    assert (run.type.ge, run.type.le) == (bounds["ge"], bounds["le"]) == (0, 1)
    assert RunConfig.model_fields["max_infra_error_rate"].default == 0.1
