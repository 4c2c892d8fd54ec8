"""Shards and merge: a sharded run merged equals the unsharded run; merge refuses what does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalkit.cli import main
from evalkit.errors import ConfigError, ResultsError
from evalkit.results.merge import merge_results
from evalkit.results.reader import load_results
from evalkit.results.records import RunRecord
from evalkit.results.shards import Shard, parse_shard
from evalkit.run.runner import run_config
from tests.run.test_runner import config

# what a run decided; timing (latency_s, wall_s) and transcripts' timings differ between machines
DECIDED = (
    "cell",
    "index",
    "seed",
    "simulated",
    "outcome",
    "completed",
    "correct",
    "failure",
    "first_try",
    "retries",
    "guard_fires",
    "model_calls",
    "wasted_calls",
    "usage",
    "check",
    "interventions",
    "error",
)


def decided(runs: list[RunRecord]) -> dict[str, dict[str, object]]:
    return {r.run_id: r.model_dump(include=set(DECIDED)) for r in runs}


@given(st.lists(st.text(min_size=1, max_size=40), unique=True, max_size=60), st.integers(1, 7))
def test_every_run_id_falls_in_exactly_one_shard(run_ids, count):
    for run_id in run_ids:
        assert sum(Shard(i, count).holds(run_id) for i in range(1, count + 1)) == 1


def test_shard_syntax_errors_are_one_line_config_errors():
    assert parse_shard(" 2 / 3 ") == Shard(2, 3)
    for bad in ("0/3", "4/3", "1/0", "a/b", "2", "-1/3"):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)


def test_three_shards_merged_equal_the_unsharded_run(tmp_path):
    whole = load_results([run_config(config(), tmp_path / "whole.jsonl")])
    shards = [run_config(config(), tmp_path / f"s{i}.jsonl", shard=Shard(i, 3)) for i in (1, 2, 3)]
    sizes = [len(load_results([p]).runs) for p in shards]
    assert all(sizes) and sum(sizes) == len(whole.runs)  # a real split, no run twice
    report = merge_results(shards, tmp_path / "all.jsonl")
    assert report.missing == [] and report.runs == len(whole.runs) and report.shards == ["1/3", "2/3", "3/3"]
    merged = load_results([tmp_path / "all.jsonl"])
    assert decided(merged.runs) == decided(whole.runs)
    assert [h.shard for h in merged.headers] == ["1/3", "2/3", "3/3"]
    # reports and the gate read the shards directly as well
    assert decided(load_results(shards).runs) == decided(whole.runs)


def test_merge_cli_reports_missing_runs_and_resume_fills_them(tmp_path, capsys):
    paths = [run_config(config(), tmp_path / f"s{i}.jsonl", shard=Shard(i, 3)) for i in (1, 3)]
    absent = len(load_results([run_config(config(), tmp_path / "s2.jsonl", shard=Shard(2, 3))]).runs)
    out = tmp_path / "all.jsonl"
    assert main(["merge", *map(str, paths), "-o", str(out)]) == 0
    assert f"{absent} runs of the plan are missing" in capsys.readouterr().out
    run_config(config(), out, resume=True)  # a merged file resumes as the whole plan
    whole = load_results([run_config(config(), tmp_path / "whole.jsonl")])
    assert decided(load_results([out]).runs) == decided(whole.runs)


def test_merge_refuses_overlaps_other_configs_and_foreign_runs(tmp_path):
    one = run_config(config(), tmp_path / "one.jsonl", shard=Shard(1, 2))
    whole = run_config(config(), tmp_path / "whole.jsonl")
    with pytest.raises(ResultsError, match="overlap"):
        merge_results([one, whole], tmp_path / "m1.jsonl")
    other = run_config(config(seed=8), tmp_path / "other.jsonl", shard=Shard(2, 2))
    with pytest.raises(ResultsError, match="config hash"):
        merge_results([one, other], tmp_path / "m2.jsonl")
    # a shard file whose header names another shard than its runs belong to
    lines = one.read_text().splitlines()
    header = json.loads(lines[0])
    header["shard"] = "2/2"
    (tmp_path / "relabelled.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(ResultsError, match="does not belong to shard 2/2"):
        merge_results([tmp_path / "relabelled.jsonl"], tmp_path / "m3.jsonl")
    assert not any((tmp_path / f"m{i}.jsonl").exists() for i in (1, 2, 3))


def test_an_infra_error_in_one_shard_is_superseded_by_a_real_record_in_another(tmp_path):
    good = run_config(config(), tmp_path / "good.jsonl", shard=Shard(1, 2))
    rest = run_config(config(), tmp_path / "rest.jsonl", shard=Shard(2, 2))
    lines = good.read_text().splitlines()
    record = json.loads(lines[1])
    record.update(outcome="infra_error", correct=False, completed=False, failure="infra_error", error="down")
    broken = tmp_path / "broken.jsonl"  # an unlabelled file holding only that run's infra_error
    header = {**json.loads(lines[0]), "shard": None}
    broken.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n")
    report = merge_results([broken, good, rest], tmp_path / "all.jsonl")
    assert report.superseded == 1
    merged = {r.run_id: r for r in load_results([tmp_path / "all.jsonl"]).runs}
    assert merged[record["run_id"]].outcome != "infra_error"


def test_resume_keeps_to_the_shard_it_started(tmp_path):
    out = run_config(config(), tmp_path / "s1.jsonl", shard=Shard(1, 2))
    with pytest.raises(ResultsError, match="same --shard"):
        run_config(config(), out, resume=True, shard=Shard(2, 2))
    with pytest.raises(ResultsError, match="same --shard"):
        run_config(config(), out, resume=True)
    run_config(config(), out, resume=True, shard=Shard(1, 2))


def test_run_command_takes_a_shard(tmp_path, capsys):
    cfg = Path(tmp_path / "c.yaml")
    cfg.write_text(json.dumps(config().model_dump(mode="json", exclude={"base_dir"})))
    out = tmp_path / "r.jsonl"
    assert main(["run", str(cfg), "--shard", "2/3", "-o", str(out), "--no-progress"]) == 0
    assert load_results([out]).headers[0].shard == "2/3"
    assert main(["run", str(cfg), "--shard", "4/3", "-o", str(tmp_path / "x.jsonl")]) == 2
    assert "--shard" in capsys.readouterr().err


def test_merge_never_allocates_from_a_headers_claims(tmp_path: Path) -> None:
    """Issue 30: a header claiming `runs_per_cell: 100000000` made merge list the plan's run ids until
    MemoryError. The missing runs are counted cell by cell and only the first few are named."""
    from evalkit.results.merge import MISSING_NAMED, missing_runs
    from tests.report import records

    header = records.header(runs_per_cell=100_000_000).model_copy(
        update={"config": {"backends": [{"label": "sim"}], "modes": ["native"], "strategies": {"trust_text": []}}}
    )
    present = {f"sim/native/trust_text/s1/{i}" for i in range(3)}
    count, named = missing_runs(header, ["s1"], present)
    assert count == 100_000_000 - 3 and len(named) == MISSING_NAMED
    assert named[0] == "sim/native/trust_text/s1/3"
