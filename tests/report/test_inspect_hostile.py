"""`evalkit export inspect` under hostile results and folders (issue 36, items 4 and 8): one log per
column whatever the column's names, no write through a link or over an existing file without
`--overwrite`, zip entry names that are safe and distinct whatever the scenario ids, every run a sample
(or a loud failure), and memory that does not grow with the transcripts. Read back with inspect_ai's
own reader (`read_eval_log`, `read_eval_log_sample`): the independent reference."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.extras import needs_extra

inspect_log = pytest.importorskip("inspect_ai.log", reason=needs_extra("inspect"))

from evalkit.chat import Message  # noqa: E402
from evalkit.cli import main  # noqa: E402
from evalkit.report.inspect_log import log_name, sample_id  # noqa: E402
from evalkit.results.output_file import holds_results  # noqa: E402
from tests.report import records  # noqa: E402


def _export(source: Path, out: Path, *extra: str) -> int:
    return main(["export", "inspect", str(source), "-o", str(out), *extra])


def _samples_of(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        return [n for n in archive.namelist() if n.startswith("samples/")]


def test_strategies_named_alike_once_sanitised_get_a_log_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strategies = ["a+b", "a-b", "a b", "q" * 300 + "1", "q" * 300 + "2"]
    runs = [records.run(strategy=s, index=i) for s in strategies for i in range(2)]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=2, name="../../" + "c" * 300)
    out = tmp_path / "logs"
    assert _export(source, out) == 0
    assert "wrote 5 inspect logs" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path)) == ["logs", "r.jsonl"]  # every log inside -o
    logs = [inspect_log.read_eval_log(str(p)) for p in sorted(out.glob("*.eval"))]
    assert sorted(log.eval.task_args["strategy"] for log in logs) == sorted(strategies)
    assert all(len(log.samples or []) == 2 for log in logs)
    assert all(len(p.name) < 200 and not p.name.startswith(".") for p in out.iterdir())


def _victim(tmp_path: Path) -> tuple[Path, bytes]:
    victim = records.write_results(tmp_path / "outside" / "victim.jsonl", [records.run()], runs_per_cell=1)
    return victim, victim.read_bytes()


def _log_names(tmp_path: Path, source: Path) -> list[str]:
    probe = tmp_path / "probe"
    assert _export(source, probe) == 0
    return sorted(p.name for p in probe.glob("*.eval"))


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_link_in_the_folder_is_never_written_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overwrite: bool
) -> None:
    (tmp_path / "outside").mkdir()
    victim, before = _victim(tmp_path)
    source = records.write_results(tmp_path / "r.jsonl", [records.run(index=i) for i in range(3)], runs_per_cell=3)
    (name,) = _log_names(tmp_path, source)
    out = tmp_path / "logs"
    out.mkdir()
    (out / name).symlink_to(victim)
    capsys.readouterr()
    assert _export(source, out, *(["--overwrite"] if overwrite else [])) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and name in err and "link" in err
    assert victim.read_bytes() == before and holds_results(victim)
    assert (out / name).is_symlink() and sorted(os.listdir(out)) == [name]  # nothing else left behind


def test_an_existing_log_is_replaced_only_with_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = records.write_results(tmp_path / "r.jsonl", [records.run(index=i) for i in range(2)], runs_per_cell=2)
    out = tmp_path / "logs"
    assert _export(source, out) == 0
    (log,) = out.glob("*.eval")
    log.write_bytes(b"an older export")
    capsys.readouterr()
    assert _export(source, out) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and log.name in err and "--overwrite" in err
    assert log.read_bytes() == b"an older export"
    assert _export(source, out, "--overwrite") == 0
    assert len(inspect_log.read_eval_log(str(log)).samples or []) == 2


def test_overwrite_never_replaces_a_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = records.write_results(tmp_path / "r.jsonl", [records.run()], runs_per_cell=1)
    (name,) = _log_names(tmp_path, source)
    out = tmp_path / "logs"
    out.mkdir()
    records.write_results(out / name, [records.run()], runs_per_cell=1)
    before = (out / name).read_bytes()
    capsys.readouterr()
    assert _export(source, out, "--overwrite") == 2
    assert "holds evalkit results" in capsys.readouterr().err
    assert (out / name).read_bytes() == before


HOSTILE_SCENARIOS = [
    "../../../../tmp/escape",
    "a\x00b",
    "a\x00c",
    "x/y",
    "x_y",
    "s_epoch_3",
    "..",
    "é—\u202e",
    "",
    "C:\\win\\path",
    "z" * 300,
]


def test_hostile_scenario_ids_give_safe_distinct_entries_and_every_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [records.run(scenario=s, index=i, family="f/../g") for s in HOSTILE_SCENARIOS for i in range(8)]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=8)
    out = tmp_path / "logs"
    assert _export(source, out) == 0
    (path,) = out.glob("*.eval")
    names = _samples_of(path)
    assert len(names) == len(set(names)) == len(runs)
    for name in names:
        assert "\x00" not in name and "\\" not in name and not name.startswith("/")
        assert ".." not in name.split("/")
        # the viewer lists a log's samples by `name.split("/")[1].split("_epoch_")`
        parts = name.split("/")
        assert len(parts) == 2 and parts[1].count("_epoch_") == 1
    log = inspect_log.read_eval_log(str(path))
    assert log.samples is not None and len(log.samples) == len(runs)
    seen = {(s.metadata["scenario"], s.epoch - 1) for s in log.samples}
    assert seen == {(r.cell.scenario, r.index) for r in runs}
    for sample in log.samples:  # the viewer reads a sample by its entry name, made from its id and epoch
        again = inspect_log.read_eval_log_sample(str(path), sample.id, sample.epoch)
        assert again.metadata["run_id"] == sample.metadata["run_id"]


def test_two_runs_that_would_be_one_sample_fail_loudly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = records.run(index=0)
    twin = first.model_copy(update={"run_id": "another id"})
    source = records.write_results(tmp_path / "r.jsonl", [first, twin], runs_per_cell=1)
    out = tmp_path / "logs"
    assert _export(source, out) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "another id" in err
    assert not out.exists() or os.listdir(out) == []  # no log, no temporary file


def test_a_superseded_infra_error_is_not_exported(tmp_path: Path) -> None:
    """The reader's one rule (`supersedes`): a later record of an infra error's run id takes its place."""
    broken = records.run(index=0, outcome="infra_error", error="down")
    again = records.run(index=0)
    repeat = records.run(index=0)  # an identical repeat of a verdict: the first is kept
    lone = records.run(index=1, outcome="infra_error", error="first try")
    lone_again = records.run(index=1, outcome="infra_error", error="second try")
    source = records.write_results(tmp_path / "r.jsonl", [broken, again, repeat, lone, lone_again], runs_per_cell=2)
    out = tmp_path / "logs"
    assert _export(source, out) == 0
    (path,) = out.glob("*.eval")
    samples = {s.epoch - 1: s for s in inspect_log.read_eval_log(str(path)).samples or []}
    assert sorted(samples) == [0, 1]
    assert samples[0].error is None and samples[0].metadata["outcome"] == "terminal_tool"
    assert samples[1].error is not None and samples[1].error.message == "second try"


def _peak_mb(args: list[str], cwd: Path) -> float:
    """A child's own peak RSS in MB."""
    with (cwd / "stderr.txt").open("w+b") as err:
        proc = subprocess.Popen([sys.executable, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        assert proc.returncode == 0, err.read().decode(errors="replace")
    return usage.ru_maxrss / 1024


def test_memory_does_not_grow_with_the_transcripts(tmp_path: Path) -> None:
    big = [Message(role="user", content="q"), Message(role="assistant", content="x" * 30_000, origin="model")]
    runs = [records.run(index=i, scenario=f"s{i % 10}", messages=big) for i in range(1_000)]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=100)
    size_mb = source.stat().st_size / 1e6
    assert size_mb > 30
    imports = "import evalkit.cli, evalkit.report.inspect_log, inspect_ai.log, inspect_ai.model, inspect_ai.scorer"
    base = _peak_mb(["-c", imports], tmp_path)
    export = _peak_mb(["-m", "evalkit", "export", "inspect", str(source), "-o", str(tmp_path / "logs")], tmp_path)
    # whole records held (1.36 GB for 20,000 runs, issue 36) take several times the file; streamed, a few MB
    assert export - base < size_mb / 2, (export, base, size_mb)


def test_inspects_listing_reads_each_logs_own_task_id_from_its_name(tmp_path: Path) -> None:
    """inspect's listing (`inspect view`'s log list) parses `<created>_<task>_<id>.eval` at underscores:
    `retry_nudge` in native and in prompt mode once both read as task id `nudge` (one shown as a retry)."""
    runs = [
        records.run(index=0, mode=mode, strategy=s)
        for mode in ("native", "prompt")
        for s in ("retry_nudge", "respond_tool", "no_tools_guard")
    ]
    source = records.write_results(tmp_path / "r.jsonl", runs, runs_per_cell=1, name="my_config")
    out = tmp_path / "logs"
    assert _export(source, out) == 0
    listed = inspect_log.list_eval_logs(str(out))
    assert len(listed) == 6
    for info in listed:
        header = inspect_log.read_eval_log(info.name, header_only=True)
        assert info.task_id == header.eval.task_id
        assert info.task.startswith("my-config-sim-m-")
    assert len({info.task_id for info in listed}) == 6


SAFE_ID = re.compile(r"[A-Za-z0-9._~-]{1,80}")


@given(st.text(max_size=120), st.text(max_size=120))
def test_sample_ids_are_safe_and_tell_scenarios_apart(a: str, b: str) -> None:
    for scenario in (a, b):
        made = sample_id(scenario)
        assert SAFE_ID.fullmatch(made) and ".." not in made and "_epoch_" not in made
        assert made == scenario or "~" in made  # a plain name is its own id; any other is marked and hashed
    assert (sample_id(a) == sample_id(b)) is (a == b)


@given(st.lists(st.text(max_size=60), min_size=4, max_size=4), st.lists(st.text(max_size=60), min_size=4, max_size=4))
@example(["a\x00b", "c", "m", "s"], ["a", "b\x00c", "m", "s"])
def test_log_names_are_plain_and_tell_columns_apart(a: list[str], b: list[str]) -> None:
    header = records.header(name="c_1")
    first, second = log_name(header, tuple(a)), log_name(header, tuple(b))  # type: ignore[arg-type]
    for name in (first, second):
        assert re.fullmatch(r"[A-Za-z0-9.-]*_[A-Za-z0-9.-]*_[0-9a-f]{22}\.eval", name) and len(name) < 200
    assert (first == second) is (a == b)
