"""The pytest plug-in, run by pytest's own `pytester` (in subprocesses: numpy cannot be imported twice
in one process, which pytester's in-process runs would ask of it): one item per scenario cell, an item failed with
the gate's reason and interval against a baseline, and the `evalkit_run` fixture."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = str(ROOT / "scenarios")
# the entry point loads the plug-in once evalkit is installed; a checkout not reinstalled needs -p
PLUGIN = (
    []
    if any(e.name == "evalkit" for e in entry_points(group="pytest11"))
    else ["-p", "evalkit.integrations.pytest_plugin"]
)


def _config(folder: Path, name: str, strategies: dict[str, list[object]]) -> Path:
    doc = {
        "name": name,
        "seed": 3,
        "runs": 20,
        "scenarios": [
            f"{SCENARIOS}/sequential_reasoning/medication_chain.yaml",
            f"{SCENARIOS}/casual_greeting/hi.yaml",
        ],
        "modes": ["native"],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local"}],
        "strategies": strategies,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_one_item_per_cell_and_all_pass_without_a_baseline(pytester: pytest.Pytester) -> None:
    stacks = {"trust_text": ["trust_text"], "nudge": ["retry_nudge"], "grammar": [{"grammar": {"mode": "grammar"}}]}
    cfg = _config(pytester.path, "plain", stacks)
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg), "-v")
    result.assert_outcomes(passed=4, skipped=2)  # a grammar with native tools is unsupported: skipped
    result.stdout.fnmatch_lines(["*sim/native/nudge/seq-medication-chain PASSED*"])


def test_a_regressed_cell_fails_with_the_gates_reason_and_interval(pytester: pytest.Pytester) -> None:
    # the baseline nudges a text reply back to tools; the candidate trusts text, under the same label
    base = _config(pytester.path, "guards", {"guard": ["retry_nudge"]})
    assert main(["run", str(base), "-o", str(pytester.path / "base.jsonl"), "--no-progress"]) == 0
    (pytester.path / "cand").mkdir()
    cand = _config(pytester.path / "cand", "guards", {"guard": ["trust_text"]})
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--evalkit", str(cand), "--evalkit-baseline", str(pytester.path / "base.jsonl")
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 1
    result.stdout.fnmatch_lines(["*sim/native/guard/seq-medication-chain: correct rate dropped*90% CI*Holm*"])


def test_a_cell_with_no_counted_run_fails_as_not_judged(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, "dead", {"trust_text": ["trust_text"]})
    doc = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    doc["runs"] = 1
    doc["backends"] = [
        {
            "label": "down",
            "kind": "openai",
            "model": "m",
            "url": "http://127.0.0.1:9",
            "timeout_s": 1,
            "retry": {"attempts": 1, "base_delay_s": 0, "max_delay_s": 0},
        }
    ]
    cfg.write_text(yaml.safe_dump(doc), encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*not judged: no counted run (infra_error)*"])


def test_the_fixture_runs_a_config_through_the_python_api(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, "api", {"trust_text": ["trust_text"]})
    pytester.makepyfile(
        f"""
        def test_it(evalkit_run):
            results = evalkit_run({str(cfg)!r}, runs=3)
            assert len(results.runs) == 2 * 3
            assert {{r.cell.strategy for r in results.runs}} == {{"trust_text"}}
        """
    )
    pytester.runpytest_subprocess(*PLUGIN).assert_outcomes(passed=1)


# -- issue 30: inputs checked before anything runs, one line each, nothing left behind ----------------


def _one_line_usage_error(result: pytest.RunResult, says: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("ERROR: evalkit: ") and says in errors[0], errors
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_missing_baseline_is_one_line_before_anything_runs(pytester: pytest.Pytester) -> None:
    # before: it ran the whole config, then failed every cell (14,692 lines for a large config)
    cfg = _config(pytester.path, "nobase", {"trust_text": ["trust_text"]})
    out = pytester.path / "out.jsonl"
    result = pytester.runpytest_subprocess(
        *PLUGIN, "--evalkit", str(cfg), "--evalkit-baseline", "missing.jsonl", "--evalkit-out", str(out)
    )
    _one_line_usage_error(result, "missing.jsonl: cannot read")
    assert not out.exists()  # nothing ran


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: x\nruns: [unclosed\n", "invalid YAML"),  # before: the right line after 16 frames of YAML internals
        ("name: x\nruns: 0\n", "runs"),
        ("- a list\n", "x.yaml"),
    ],
)
def test_a_bad_config_is_one_line_without_traceback_frames(pytester: pytest.Pytester, text: str, says: str) -> None:
    cfg = pytester.path / "x.yaml"
    cfg.write_text(text, encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg))
    _one_line_usage_error(result, says)
    assert "yaml/" not in result.stdout.str() + result.stderr.str()


def test_an_output_that_cannot_be_written_is_one_line(pytester: pytest.Pytester) -> None:
    cfg = _config(pytester.path, "badout", {"trust_text": ["trust_text"]})
    (pytester.path / "afile").write_text("x", encoding="utf-8")
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg), "--evalkit-out", "afile/r.jsonl")
    _one_line_usage_error(result, "is not a directory")


def test_the_temporary_results_folder_is_removed(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: every session left an evalkit-* folder in the temporary directory
    cfg = _config(pytester.path, "tidy", {"trust_text": ["trust_text"]})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # where the child's tempfile.mkdtemp makes its folder
    result = pytester.runpytest_subprocess(*PLUGIN, "--evalkit", str(cfg))
    result.assert_outcomes(passed=2)
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("evalkit-")]
