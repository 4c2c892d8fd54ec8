"""`evalkit gate` on the command line: exit codes, what it prints, the files it writes, --sequential."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from evalkit.cli import main
from evalkit.gate.sequential import baseline_counts
from evalkit.results.reader import load_results
from evalkit.run.config import load_config
from evalkit.run.runner import run_config
from evalkit.stats.stopping_rule import cell_rule, decide
from tests.gate.test_comparison import GATE_SCENARIOS, Sims, gate_results, shared_sims
from tests.report import records

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sims(tmp_path_factory: pytest.TempPathFactory) -> Sims:
    return shared_sims(tmp_path_factory)


def gate(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["gate", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, out: str, err: str) -> str:
    """Exit 2 with a single `evalkit: error: ...` line and nothing on stdout; returns the reason."""
    assert code == 2 and out == ""
    assert err.endswith("\n") and err.count("\n") == 1 and err.startswith("evalkit: error: ")
    return err[len("evalkit: error: ") :].strip()


def test_a_candidate_equal_to_the_baseline_exits_0(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md, junit = tmp_path / "out" / "summary.md", tmp_path / "out" / "gate.xml"
    code, out, err = gate(
        capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--markdown", md, "--junit", junit
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "evalkit gate: PASS — 0 regressed, 8 passed (no margin set: a pass means not shown worse) (metric correct; "
        "level scenario; α = 0.05, Holm across 8 cells)"
    )
    assert "FAIL" not in out
    assert md.read_text(encoding="utf-8").startswith("## evalkit gate: PASS")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("8", "0")
    gate(capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--markdown", md, "--level", "cell")
    summary = md.read_text(encoding="utf-8")  # a CI step summary is shared: the second gate appends
    assert summary.count("## evalkit gate: PASS") == 2 and "level cell" in summary.split("## evalkit gate")[2]


def test_a_degraded_candidate_exits_1_and_says_which_cells_and_why(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md, junit = tmp_path / "summary.md", tmp_path / "gate.xml"
    code, out, err = gate(
        capsys,
        "--baseline",
        sims.baseline,
        "--candidate",
        sims.degraded,
        "--markdown",
        md,
        "--junit",
        junit,
        "--level",
        "cell",
        "--metric",
        "completed",
    )
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0].startswith(
        "evalkit gate: FAIL — 2 regressed, 0 passed (no margin set: a pass means not shown worse) (metric completed; "
        "level cell;"
    )
    assert "note: model changed: small-local → small-local-degraded (sim)" in lines
    for strategy in ("retry_nudge", "trust_text"):
        at = lines.index(
            f"FAIL sim/native/{strategy} (family all, scenario all scenarios pooled, model small-local → "
            f"small-local-degraded, strategy {strategy}, backend sim, mode native)"
        )
        reason = lines[at + 1]
        assert reason.startswith("     - completed rate dropped ") and "one-sided McNemar exact, paired (" in reason
        assert "Holm-adjusted" in reason and "≤ α = 0.05" in reason and "largest drops: " in reason
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "2"
    assert all(case.find("failure") is not None for case in suite.findall("testcase"))
    assert md.read_text(encoding="utf-8").count("**FAIL**") == 2


def test_verbose_scenario_level_lists_every_cell(sims: Sims, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = gate(capsys, "--baseline", sims.baseline, "--candidate", sims.degraded, "--level", "scenario", "-v")
    listed = [line for line in out.splitlines() if line.startswith(("pass ", "FAIL "))]
    assert len(listed) == len(GATE_SCENARIOS) * 2
    assert all(line.split()[1].count("/") == 3 for line in listed)
    assert code == (1 if any(line.startswith("FAIL") for line in listed) else 0)


def test_alpha_pairing_and_test_options(sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pooled = ("--level", "cell", "--metric", "completed")
    code, out, _ = gate(
        capsys, "--baseline", sims.baseline, "--candidate", sims.degraded, "--alpha", "0.00001", *pooled
    )
    assert code == 0 and "α = 1e-05" in out  # the drops are real, but not at this level
    for i, (options, test) in enumerate(
        (
            (["--pairing", "unpaired", "--test", "fisher"], "Fisher exact"),
            (["--pairing", "unpaired"], "Boschloo exact"),
            ([], "McNemar exact, paired"),
        )
    ):
        md = tmp_path / f"summary-{i}.md"
        gate(capsys, "--baseline", sims.baseline, "--candidate", sims.degraded, "--markdown", md, *options, *pooled)
        rows = [line.split(" | ") for line in md.read_text(encoding="utf-8").splitlines() if line.startswith("| sim/")]
        # a failed row names the test in column 8, a passed (folded) row in column 5
        assert len(rows) == 2 and all(test in row[7 if "**FAIL**" in row[-1] else 4] for row in rows), options


def test_floor_from_the_command_line_and_from_a_config_file(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pooled = ("--level", "cell", "--metric", "completed")
    code, out, _ = gate(capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--floor", "0.99", *pooled)
    assert code == 1  # no change at all, but both columns are significantly under 99%
    assert out.count("is under the floor 99%: one-sided exact binomial p = ") == 2
    assert 'note: floor: one-sided exact binomial test of "rate ≥ floor" per cell, in one Holm family of 4 tests' in out
    config = tmp_path / "gate.yaml"
    config.write_text(
        yaml.safe_dump({"floors": [{"strategy": "trust_*", "floor": 0.01}], "max_infra_error_rate": 0.05}),
        encoding="utf-8",
    )
    code, out, _ = gate(
        capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--config", config, "-v", *pooled
    )
    assert code == 0 and "pass sim/native/trust_text" in out
    config.write_text(yaml.safe_dump({"floors": [{"strategy": "trust_*", "floor": 0.99}]}), encoding="utf-8")
    code, out, _ = gate(capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--config", config, *pooled)
    assert code == 1 and "FAIL sim/native/trust_text" in out and "FAIL sim/native/retry_nudge" not in out
    code, out, _ = gate(
        capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--config", config, "--floor", "0.01", *pooled
    )  # a rule for the cell still wins over the default floor
    assert code == 1


# --- exit 2: unusable input, with a one-line reason ----------------------------------------------


def test_mismatched_scenarios_are_not_judged_exit_4(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fewer = gate_results(tmp_path, "fewer", scenarios=GATE_SCENARIOS[:3], runs=3)
    code, out, _ = gate(capsys, "--baseline", sims.baseline, "--candidate", fewer, "--level", "cell")
    assert code == 4 and "ran different scenarios (only in the baseline: gap-missing-date)" in out
    code, out, _ = gate(capsys, "--baseline", sims.baseline, "--candidate", fewer)
    assert code == 4
    assert "not judged: sim/native/retry_nudge/gap-missing-date: missing in the candidate" in out.splitlines()


def test_empty_cells_and_infra_errors_exit_2(sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header_only = records.write_results(tmp_path / "empty.jsonl", [])
    assert "no run records (header only)" in one_line_error(
        *gate(capsys, "--baseline", sims.baseline, "--candidate", header_only)
    )
    base = records.write_results(tmp_path / "base.jsonl", records.cell_runs(20, 20), runs_per_cell=20)
    broken = records.write_results(
        tmp_path / "broken.jsonl",
        [
            *records.cell_runs(15, 15),
            *(
                records.run(index=15 + i, outcome="infra_error", completed=False, error="connection refused")
                for i in range(5)
            ),
        ],
        runs_per_cell=20,
    )
    reason = one_line_error(*gate(capsys, "--baseline", base, "--candidate", broken))
    assert reason == (
        "sim/native/trust_text: 5 of 20 candidate runs are infra errors, more than "
        "max_infra_error_rate 10%; fix the backend and rerun"
    )
    code, _, _ = gate(capsys, "--baseline", base, "--candidate", broken, "--max-infra-error-rate", "0.3")
    assert code == 0


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read: No such file or directory"),
        (b"\xff\xfe binary", "not UTF-8 text"),
        ("this is not json\n", ":1: not JSON"),
        ('{"type": "run"}\n', ":1: "),  # a run record missing every field
        ('{"type": "footer", "finished_at": "x", "status": "complete", "runs_written": 0}\n', "no header record"),
    ],
)
def test_unreadable_results_files_exit_2(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes | None, expected: str
) -> None:
    path = tmp_path / "candidate.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    reason = one_line_error(*gate(capsys, "--baseline", sims.baseline, "--candidate", path))
    assert str(path) in reason and expected in reason


def test_options_the_runs_cannot_pair_exit_2(sims: Sims, capsys: pytest.CaptureFixture[str]) -> None:
    reason = one_line_error(
        *gate(capsys, "--baseline", sims.baseline, "--candidate", sims.reseeded, "--pairing", "paired")
    )
    assert reason.startswith("pairing: paired, but the runs do not pair up")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--floor", "1.5"], "argument --floor: '1.5' is not a number in [0, 1]"),
        (["--alpha", "0"], "argument --alpha: '0' is not a number in (0, 1)"),
        (["--max-infra-error-rate", "nan"], "argument --max-infra-error-rate: 'nan' is not a number in [0, 1]"),
        (["--margin", "1"], "argument --margin: '1' is not a number in [0, 1)"),
        (["--max-runs", "0"], "argument --max-runs: '0' is not a whole number in [1, 100000]"),
        (["--batch", "0"], "argument --batch: '0' is not a whole number in [1, 100000]"),
        (["--futility", "-1"], "argument --futility: '-1' is not a number in [0, 1)"),
    ],
)
def test_options_out_of_range_are_a_usage_error_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    missing = tmp_path / "missing.jsonl"  # never opened: the option is refused while parsing
    assert main(["gate", "--baseline", str(missing), "--candidate", str(missing), *options]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"evalkit gate: error: {expected}")


def test_a_bad_gate_config_file_exits_2_naming_the_line(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gate.yaml"
    config.write_text("alpha: 0.05\nlevel: cells\n", encoding="utf-8")
    reason = one_line_error(*gate(capsys, "--baseline", sims.baseline, "--candidate", sims.rerun, "--config", config))
    assert reason.startswith(f"{config}:2: level: ")


# --- sequential mode ---------------------------------------------------------------------------------

SEQ_SCENARIOS = ("casual_greeting/hi.yaml", "relevance_detection/capital_city.yaml")


def sequential_config(folder: Path, profile: str, *, seed: int = 5, runs: int = 1, name: str = "") -> Path:
    path = folder / f"{name or profile}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": f"seq-{name or profile}",
                "seed": seed,
                "runs": runs,
                "scenarios": [str(ROOT / "scenarios" / s) for s in SEQ_SCENARIOS],
                "backends": [{"label": "sim", "kind": "sim", "model": profile}],
                "strategies": {"retry_nudge": ["retry_nudge"]},
            }
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def strong_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """25 runs per cell of the strong profile on other seeds than the candidates'."""
    folder = tmp_path_factory.mktemp("seq-baseline")
    config = load_config(sequential_config(folder, "strong", seed=77, runs=25, name="baseline"))
    return run_config(config, folder / "baseline.jsonl")


def replay(out_dir: Path, baseline: Path, cells: int, max_runs: int = 50, batch: int = 5) -> dict[str, tuple[str, int]]:
    """Each cell's decision and stopping point, recomputed from the batch files with sequential_rule; a
    decided cell must have no runs in later batches."""
    base = baseline_counts(load_results([baseline]), "correct")
    outcomes: dict[str, list[list[bool]]] = {}
    for path in sorted(out_dir.glob("batch-*.jsonl")):
        for run in sorted(load_results([path]).runs, key=lambda r: r.index):
            name = f"sim/native/retry_nudge/{run.cell.scenario}"
            seen = outcomes.setdefault(name, [])
            if len(seen) <= int(path.stem.split("-")[1]):
                seen.append([])
            seen[-1].append(run.correct)
    decided: dict[str, tuple[str, int]] = {}
    looks = -(-max_runs // batch) - 1
    for name, batches in outcomes.items():
        rule = cell_rule(*base[name], max_runs, 0.05 / cells, looks=looks)
        flat: list[bool] = []
        for i, runs in enumerate(batches):
            flat += runs
            final = len(flat) >= max_runs
            decision = decide(rule, sum(flat), len(flat) - sum(flat), interim=not final)
            if decision != "continue":
                decided[name] = (decision, len(flat))
                assert len(batches) == i + 1, f"{name} kept running after its verdict"
                break
    return decided


def test_sequential_passes_an_identical_candidate_early(
    tmp_path: Path, strong_baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, md, junit = tmp_path / "batches", tmp_path / "seq.md", tmp_path / "seq.xml"
    code, out, err = gate(
        capsys,
        "--sequential",
        "--baseline",
        strong_baseline,
        "--candidate",
        sequential_config(tmp_path, "strong"),
        "--out",
        out_dir,
        "--markdown",
        md,
        "--junit",
        junit,
    )
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(
        "evalkit gate --sequential: PASS: 0 of 2 cells regressed against the baseline "
        "(metric correct; α = 0.05, 0.025 per cell [Bonferroni]"
    )
    expected = replay(out_dir, strong_baseline, 2)
    assert set(expected) == {"sim/native/retry_nudge/greet-hi", "sim/native/retry_nudge/rel-capital-city"}
    for name, (decision, used) in expected.items():
        assert decision.startswith("accept") and used < 50  # stopped before the cap
        assert any(line.startswith(f"pass {name}: {decision} after {used} runs") for line in lines)
    summary = md.read_text(encoding="utf-8")
    assert summary.startswith("## evalkit gate --sequential: PASS") and "```" not in summary
    assert summary.count("| sim/native/retry_nudge/") == 2
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "0")


def test_sequential_stops_a_degraded_candidate_early(
    tmp_path: Path, strong_baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, junit = tmp_path / "batches", tmp_path / "seq.xml"
    code, out, _ = gate(
        capsys,
        "--sequential",
        "--baseline",
        strong_baseline,
        "--candidate",
        sequential_config(tmp_path, "small-local-degraded"),
        "--out",
        out_dir,
        "--junit",
        junit,
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("evalkit gate --sequential: FAIL: 2 of 2 cells regressed")
    for name, (decision, used) in replay(out_dir, strong_baseline, 2).items():
        assert decision.startswith("regression") and used < 50
        scenario = name.rsplit("/", 1)[1]
        family = "casual_greeting" if scenario == "greet-hi" else "relevance_detection"
        assert any(
            line.startswith(f"FAIL {name}: {decision} after {used} runs")
            and line.endswith(
                f"(family {family}, scenario {scenario}, "
                "model small-local-degraded, strategy retry_nudge, backend sim, mode native)"
            )
            for line in lines
        )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "2"


def test_sequential_decides_at_max_runs(
    tmp_path: Path, strong_baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = sequential_config(tmp_path, "small-local-degraded")
    code, out, _ = gate(
        capsys,
        "--sequential",
        "--baseline",
        strong_baseline,
        "--candidate",
        config,
        "--out",
        tmp_path / "b",
        "--batch",
        "2",
        "--max-runs",
        "3",
        "--futility",
        "0",
    )
    decided = replay(tmp_path / "b", strong_baseline, 2, max_runs=3, batch=2)
    assert len(decided) == 2 and all(used <= 3 for _, used in decided.values())
    assert code == (1 if any(d.startswith("regression") for d, _ in decided.values()) else 0)
    for name, (decision, used) in decided.items():
        assert f" {name}: {decision} after {used} runs" in out


def test_sequential_names_every_cell_it_could_not_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = records.write_results(tmp_path / "other.jsonl", records.cell_runs(20, 20), runs_per_cell=20)
    md = tmp_path / "seq.md"
    code, out, _ = gate(
        capsys,
        "--sequential",
        "--baseline",
        other,
        "--candidate",
        sequential_config(tmp_path, "strong"),
        "--out",
        tmp_path / "b",
        "--markdown",
        md,
    )
    assert code == 4
    lines = out.splitlines()
    assert "not judged: sim/native/trust_text/s1: not in the candidate config" in lines
    assert "not judged: sim/native/retry_nudge/greet-hi: not in the baseline" in lines
    assert md.read_text(encoding="utf-8").startswith("## evalkit gate --sequential: NOT JUDGED")


def test_sequential_with_a_dead_backend_exits_2(
    tmp_path: Path, strong_baseline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "dead.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "dead",
                "runs": 1,
                "scenarios": [str(ROOT / "scenarios/casual_greeting/hi.yaml")],
                "backends": [
                    {
                        "label": "sim",
                        "kind": "openai",
                        "model": "x",
                        "url": "http://127.0.0.1:9/v1",
                        "timeout_s": 5,
                        "retry": {"attempts": 1, "base_delay_s": 0},
                    }
                ],
                "strategies": {"trust_text": ["trust_text"]},
            }
        ),
        encoding="utf-8",
    )
    junit = tmp_path / "seq.xml"
    reason = one_line_error(
        *gate(
            capsys,
            "--sequential",
            "--baseline",
            strong_baseline,
            "--candidate",
            config,
            "--out",
            tmp_path / "b",
            "--junit",
            junit,
        )
    )
    assert reason == "dead: no candidate run counted (all unsupported or infra errors)"
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert error is not None and error.get("message") == reason


@pytest.mark.parametrize("problem", ["empty candidate", "bad setting", "bad config"])
def test_exit_2_writes_the_files_asked_for_with_the_reason(
    sims: Sims, tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    md, junit = tmp_path / "summary.md", tmp_path / "gate.xml"
    md.write_text("## an earlier CI step\n", encoding="utf-8")
    candidate: Path = sims.rerun
    options: list[str | Path] = []
    if problem == "empty candidate":
        candidate = records.write_results(tmp_path / "empty.jsonl", [])
    elif problem == "bad setting":
        settings = tmp_path / "gate.yaml"
        settings.write_text("alpha: 2\n", encoding="utf-8")
        options = ["--config", settings]
    else:
        options = ["--config", tmp_path / "missing.yaml"]
    reason = one_line_error(
        *gate(
            capsys, "--baseline", sims.baseline, "--candidate", candidate, "--markdown", md, "--junit", junit, *options
        )
    )
    summary = md.read_text(encoding="utf-8")
    assert summary.startswith(
        "## an earlier CI step\n## evalkit gate: ERROR (exit 2): the inputs could not be compared"
    )
    assert f"> {reason.replace('<', '&lt;').replace('>', '&gt;')}\n" in summary
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("1", "1", "0")
    error = suite.find("testcase/error")
    assert error is not None and error.get("message") == reason and error.get("type") == "input"
