"""The runner end to end on the simulated backend: the results file, resume, faults, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.errors import ResultsError
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.runner import run_config

SCENARIOS = str(Path(__file__).resolve().parents[2] / "scenarios" / "*" / "*.yaml")


def config(**overrides) -> RunConfig:  # type: ignore[no-untyped-def]
    data = {
        "name": "t",
        "seed": 7,
        "runs": 3,
        "scenarios": [SCENARIOS],
        "families": ["casual_greeting", "sequential_reasoning"],
        "backends": [{"label": "sim", "kind": "sim", "model": "small-local", "concurrency": 8}],
        "strategies": {"trust_text": ["trust_text"], "nudge": ["retry_nudge"]},
    }
    data.update(overrides)
    return RunConfig.model_validate(data)


def test_results_file_has_header_runs_and_footer(tmp_path):
    out = run_config(config(), tmp_path / "r.jsonl")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["simulated"] is True
    assert lines[-1] == {**lines[-1], "type": "footer", "status": "complete", "runs_written": 48}
    results = load_results([out])
    assert len(results.runs) == 8 * 2 * 3 and all(r.simulated for r in results.runs)
    assert results.headers[0].backends["sim"]["simulated"] is True


def test_same_seed_same_results(tmp_path):
    a = load_results([run_config(config(), tmp_path / "a.jsonl")])
    b = load_results([run_config(config(), tmp_path / "b.jsonl")])
    assert [(r.run_id, r.correct, r.retries) for r in sorted(a.runs, key=lambda r: r.run_id)] == [
        (r.run_id, r.correct, r.retries) for r in sorted(b.runs, key=lambda r: r.run_id)
    ]


def test_resume_after_interruption_loses_and_duplicates_nothing(tmp_path):
    full = load_results([run_config(config(), tmp_path / "full.jsonl")])
    out = tmp_path / "cut.jsonl"
    run_config(config(), out)
    lines = out.read_text().splitlines(keepends=True)
    # keep the header and 20 runs, then half a record, as a killed process leaves it
    out.write_text("".join(lines[:21]) + lines[21][: len(lines[21]) // 2])
    run_config(config(), out, resume=True)
    resumed = load_results([out])
    assert sorted(r.run_id for r in resumed.runs) == sorted(r.run_id for r in full.runs)
    assert len(resumed.runs) == len({r.run_id for r in resumed.runs})
    assert [h.resumed for h in resumed.headers] == [False, True]
    by_id = {r.run_id: r.correct for r in full.runs}
    assert all(by_id[r.run_id] == r.correct for r in resumed.runs)


def test_existing_file_needs_resume_and_the_same_config(tmp_path):
    out = run_config(config(), tmp_path / "r.jsonl")
    with pytest.raises(ResultsError, match="--resume"):
        run_config(config(), out)
    with pytest.raises(ResultsError, match="different config"):
        run_config(config(seed=8), out, resume=True)


def test_a_misspelt_option_is_refused_before_anything_is_written(tmp_path):
    """The options are one `RunOptions`; a name it does not have stays a TypeError, as a plain
    keyword argument's was, for a caller without a type checker too."""
    out = tmp_path / "r.jsonl"
    with pytest.raises(TypeError, match="unexpected keyword argument 'resumed'"):
        run_config(config(), out, resumed=True)  # type: ignore[call-arg]
    assert not out.exists()


def test_a_backend_that_stays_down_is_infra_error_not_a_model_failure(tmp_path):
    down = {
        "label": "dead",
        "kind": "openai",
        "model": "m",
        "url": "http://127.0.0.1:9",
        "api_key_env": "EVALKIT_TEST_KEY",
        "timeout_s": 2,
        "retry": {"attempts": 2, "base_delay_s": 0, "max_delay_s": 0},
    }
    import os

    os.environ["EVALKIT_TEST_KEY"] = "sk-test-secret"
    try:
        out = run_config(config(backends=[down], runs=1, families=["casual_greeting"]), tmp_path / "r.jsonl")
    finally:
        del os.environ["EVALKIT_TEST_KEY"]
    results = load_results([out])
    assert {r.outcome for r in results.runs} == {"infra_error"} and not any(r.completed for r in results.runs)
    assert "sk-test-secret" not in out.read_text()


def test_default_config_shows_the_guard_trade_offs(tmp_path, repo_root):
    cfg = load_config(repo_root / "configs" / "default.yaml").model_copy(update={"runs": 25})
    results = load_results([run_config(cfg, tmp_path / "d.jsonl")])

    def rate(strategy: str, family: str) -> float:
        runs = [r for r in results.runs if r.cell.strategy == strategy and r.cell.family == family and r.counted]
        return sum(r.completed for r in runs) / len(runs)

    for family in ("sequential_reasoning", "data_gap_recovery"):
        assert rate("trust_text", family) < rate("retry_nudge", family) - 0.3
    assert rate("respond_tool", "casual_greeting") > rate("retry_nudge", "casual_greeting") + 0.3


def test_run_command_writes_results_and_prints_a_summary(tmp_path, capsys, repo_root):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
name: cli
runs: 2
scenarios: ["{SCENARIOS}"]
families: [casual_greeting]
backends: [{{label: sim, kind: sim, model: strong}}]
strategies: {{trust_text: [trust_text]}}
""")
    out = tmp_path / "out.jsonl"
    assert main(["run", str(cfg), "-o", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "SIMULATED" in printed and "casual_greeting"[:14] in printed and out.exists()
    assert main(["run", str(cfg), "-o", str(out)]) == 2  # exists, no --resume
    assert main(["run", str(cfg), "-o", str(out), "--resume", "--no-progress"]) == 0


def test_resumed_recording_drops_cut_off_calls_so_replay_matches(tmp_path):
    rec, out = tmp_path / "rec", tmp_path / "cut.jsonl"
    run_config(config(), out, record_dir=rec)
    recordings = rec / "sim" / "recordings.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:21]))  # killed after 20 runs ...
    cut_off = json.loads(lines[30])["run_id"]
    stale = [json.loads(x) for x in recordings.read_text().splitlines() if json.loads(x)["run_id"] == cut_off]
    stale[0]["completion"] = {"text": "a stale answer from the attempt that was cut off"}
    with recordings.open("a") as fh:  # ... with its first call already recorded
        fh.write(json.dumps(stale[0]) + "\n")
    run_config(config(), out, resume=True, record_dir=rec)
    assert "stale answer" not in recordings.read_text()
    replayed = load_results([run_config(config().as_replay(rec), tmp_path / "replayed.jsonl")])
    recorded = load_results([out])
    assert {r.run_id: (r.outcome, r.correct, r.retries) for r in replayed.runs} == {
        r.run_id: (r.outcome, r.correct, r.retries) for r in recorded.runs
    }


def test_a_fresh_run_refuses_a_recording_directory_in_use(tmp_path):
    run_config(config(), tmp_path / "a.jsonl", record_dir=tmp_path / "rec")
    with pytest.raises(ResultsError, match="already holds recordings"):
        run_config(config(), tmp_path / "b.jsonl", record_dir=tmp_path / "rec")


def test_retry_infra_reruns_only_infra_errors_and_supersedes_them(tmp_path):
    out = run_config(config(), tmp_path / "r.jsonl")
    lines = out.read_text().splitlines(keepends=True)
    broken = json.loads(lines[5])
    broken.update(
        outcome="infra_error",
        failure="infra_error",
        completed=False,
        correct=False,
        error="HTTP 503 from /v1/chat/completions",
    )
    lines[5] = json.dumps(broken) + "\n"
    out.write_text("".join(lines))
    before = load_results([out])
    assert [r.run_id for r in before.runs if r.outcome == "infra_error"] == [broken["run_id"]]
    text = out.read_text()
    run_config(config(), out, resume=True)  # plain resume: nothing pending, the infra error stays
    assert out.read_text() == text
    run_config(config(), out, resume=True, retry_infra=True)
    after = load_results([out])
    assert len(after.runs) == 48 and not [r for r in after.runs if r.outcome == "infra_error"]
    assert after.footers[-1].runs_written == 1
    assert [r.run_id for r in after.runs] == [r.run_id for r in before.runs]  # replaced in place


def test_retry_infra_needs_resume(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(
        f"name: c\nscenarios: ['{SCENARIOS}']\nbackends: [{{label: s, kind: sim, model: small-local}}]\n"
        "strategies: {t: [trust_text]}\n"
    )
    assert main(["run", str(path), "--retry-infra", "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "--retry-infra needs --resume" in capsys.readouterr().err
