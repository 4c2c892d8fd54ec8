"""Everything a run needs is checked before its results file exists.

Each test starts from the input the issue reported, through the CLI (`main([...])` returns the exit
code) and through the Python API. Runs are on the simulated backend, a few runs per cell.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.cli import main
from evalkit.cli.progress import ProgressBar
from evalkit.errors import ConfigError, ResultsError
from evalkit.results.integrity import check_integrity
from evalkit.results.reader import load_results
from evalkit.run.config import RunConfig, load_config
from evalkit.run.preflight import MAX_PLANNED_RUNS, config_scenarios, discard_empty_leftover, preflight
from evalkit.run.runner import run_config

SCENARIOS = str(Path(__file__).resolve().parents[2] / "scenarios" / "*" / "*.yaml")
UNSET = "EVALKIT_PREFLIGHT_TEST_NEVER_SET_7c41"  # a key variable no environment defines
SIM = {"label": "sim", "kind": "sim", "model": "small-local"}


def config_doc(**overrides: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "pre",
        "seed": 3,
        "runs": 2,
        "scenarios": [SCENARIOS],
        "families": ["casual_greeting"],
        "backends": [SIM],
        "strategies": {"trust_text": ["trust_text"], "nudge": ["retry_nudge"]},
    }
    doc.update(overrides)
    return doc


# the greeting scenarios the default config_doc runs (counted, so that adding one breaks no test)
GREETINGS = len(config_scenarios(RunConfig.model_validate(config_doc())))
CELLS = GREETINGS * 2  # two guard stacks


def write_config(path: Path, **overrides: Any) -> Path:
    path.write_text(yaml.safe_dump(config_doc(**overrides), sort_keys=False), encoding="utf-8")
    return path


def run_cli(*args: str | Path) -> int:
    return main(["run", *map(str, args), "--no-progress"])


def one_line(text: str) -> str:
    """The only line of `text` (an error must be one line, with no traceback)."""
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def cells_runs(path: Path) -> dict[tuple[str, ...], tuple[int, ...]]:
    """cell -> the run indices recorded for it, sorted (duplicates kept, to be seen)."""
    out: dict[tuple[str, ...], list[int]] = {}
    for run in load_results([path]).runs:
        out.setdefault(run.cell.key(), []).append(run.index)
    return {cell: tuple(sorted(indices)) for cell, indices in out.items()}


# -- item 4: -n is validated -----------------------------------------------------------------------


@pytest.mark.parametrize("n", ["0", "-1", "1000000000000"])
def test_a_bad_n_is_a_one_line_error_and_leaves_no_file(
    n: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: -n 0 was silently ignored, -n -1 left an empty file, -n 1000000000000 hung planning
    out = tmp_path / "r.jsonl"
    assert run_cli(write_config(tmp_path / "c.yaml"), "-o", out, "-n", n) == 2
    expected = f"evalkit run: error: argument -n/--runs: {n!r} is not a whole number in [1, 100000]"
    assert one_line(capsys.readouterr().err).startswith(expected)  # the range of a config's `runs:`
    assert not out.exists()


@pytest.mark.parametrize("n", [0, -1, 10**12])
def test_with_runs_checks_n_like_the_configs_own_runs(n: int, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"^-n {n}: "):
        RunConfig.model_validate(config_doc()).with_runs(n)
    with pytest.raises(ConfigError, match=r"c\.yaml:\d+: runs: "):
        load_config(write_config(tmp_path / "c.yaml", runs=n))


def test_a_plan_over_the_limit_is_refused_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # -n 100000 is a valid N; over 4 scenarios x 250 guard stacks it is 10^8 runs. The CLI counted
    # its progress bar's total by building every planned run first: minutes before the refusal.
    stacks = {f"s{i}": ["trust_text"] for i in range(250)}
    cfg = write_config(tmp_path / "c.yaml", strategies=stacks)
    out = tmp_path / "r.jsonl"
    assert run_cli(cfg, "-o", out, "-n", "100000") == 2
    message = one_line(capsys.readouterr().err)
    assert f"the limit for one results file is {MAX_PLANNED_RUNS}" in message and "runs:" in message
    assert not out.exists()
    with pytest.raises(ConfigError, match=f"{250 * GREETINGS} cells x 100000 runs"):
        preflight(load_config(cfg).with_runs(100_000))


# -- item 5: a failed start leaves no file, and the next run is not blocked ------------------------

FAILED_STARTS: dict[str, tuple[dict[str, Any], tuple[str, ...], str]] = {
    # name -> (config overrides, extra CLI arguments, what the error names)
    "unknown backend kind": ({"backends": [{**SIM, "kind": "simulated"}]}, (), "backends.0.kind"),
    "unset api_key_env": (
        {
            "backends": [
                {"label": "api", "kind": "openai", "model": "m", "url": "http://127.0.0.1:9/v1", "api_key_env": UNSET}
            ]
        },
        (),
        f"backends.0.api_key_env: environment variable {UNSET} is not set",
    ),
    "families match nothing": ({"families": ["no_such_family"]}, (), "families: ['no_such_family'] match no"),
    "-n -1": ({}, ("-n", "-1"), "argument -n/--runs: '-1'"),
    "unknown --backend": ({}, ("--backend", "nope"), "no backend labelled ['nope']"),
    "scenarios match no file": ({"scenarios": ["missing/*.yaml"]}, (), "scenarios: pattern 'missing/*.yaml' matches"),
}


@pytest.mark.parametrize("case", FAILED_STARTS)
def test_a_failed_start_leaves_no_file_and_a_fixed_rerun_runs(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: a 0-byte file was left; the plain rerun said "exists: pass --resume", and
    # --resume said "no header record"
    overrides, extra, named = FAILED_STARTS[case]
    cfg, out = tmp_path / "c.yaml", tmp_path / "r.jsonl"
    assert run_cli(write_config(cfg, **overrides), "-o", out, *extra) == 2
    assert named in one_line(capsys.readouterr().err)
    assert sorted(tmp_path.iterdir()) == [cfg]  # no results file, no lock file
    assert run_cli(write_config(cfg), "-o", out) == 0  # fixed: a plain rerun, no --resume needed
    assert run_cli(cfg, "-o", out, "--resume") == 0
    assert set(cells_runs(out).values()) == {(0, 1)} and len(cells_runs(out)) == CELLS


@pytest.mark.parametrize("leftover", [b"", b'{"type": "header", "sche'])
@pytest.mark.parametrize("resume", [False, True])
def test_an_empty_or_cut_leftover_does_not_block_a_run(leftover: bytes, resume: bool, tmp_path: Path) -> None:
    # what a start killed before its header line was complete leaves behind
    out = tmp_path / "r.jsonl"
    out.write_bytes(leftover)
    cfg = write_config(tmp_path / "c.yaml")
    assert run_cli(cfg, "-o", out, *(["--resume"] if resume else [])) == 0
    results = load_results([out])
    assert len(results.headers) == 1 and len(results.runs) == CELLS * 2 and not check_integrity(results)


def test_a_progress_bar_does_not_create_the_file_of_a_start_that_fails(tmp_path: Path) -> None:
    # on a terminal, `run` made its progress bar (which tails the results file) before the checks,
    # and the bar created the file: a failed start left a 0-byte file
    out, stream = tmp_path / "r.jsonl", io.StringIO()
    bar = ProgressBar(True, planned=CELLS * 2, results=out, stream=stream)
    with pytest.raises(ConfigError, match="match no scenario"):
        run_config(RunConfig.model_validate(config_doc(families=["nope"])), out, progress=bar)
    bar.close()
    assert not out.exists()
    bar = ProgressBar(True, planned=CELLS * 2, results=out, stream=stream)
    run_config(RunConfig.model_validate(config_doc()), out, progress=bar)
    assert f"{CELLS * 2}/{CELLS * 2} runs" in stream.getvalue() and len(load_results([out]).runs) == CELLS * 2


@pytest.mark.parametrize("resume", [False, True])
def test_an_output_that_is_a_directory_or_under_a_file_is_a_one_line_error(
    resume: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # -o DIR said "exists: pass --resume", and --resume then died with an IsADirectoryError traceback
    cfg, folder, plain = write_config(tmp_path / "c.yaml"), tmp_path / "out", tmp_path / "plain"
    folder.mkdir()
    plain.write_text("not a folder")
    again = ["--resume"] if resume else []
    assert run_cli(cfg, "-o", folder, *again) == 2
    assert one_line(capsys.readouterr().err) == (
        f"evalkit: error: {folder} is not a regular file: give the path of a results file (-o FILE.jsonl)"
    )
    assert run_cli(cfg, "-o", plain / "r.jsonl", *again) == 2
    assert one_line(capsys.readouterr().err) == (
        f"evalkit: error: -o {plain / 'r.jsonl'}: cannot write: {plain} is not a directory"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "out", "plain"] and not list(folder.iterdir())
    assert run_cli(cfg, "-o", folder / "new" / "r.jsonl") == 0  # missing folders are made


def test_a_record_dir_that_is_a_file_is_a_one_line_error_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "afile/sim: cannot write: Not a directory; ... continue with `run --resume`", with no file to resume
    cfg, out, plain = write_config(tmp_path / "c.yaml"), tmp_path / "r.jsonl", tmp_path / "plain"
    plain.write_text("not a folder")
    assert run_cli(cfg, "-o", out, "--record", plain) == 2
    assert one_line(capsys.readouterr().err) == f"evalkit: error: --record {plain}: not a directory"
    assert run_cli(cfg, "-o", out, "--record", plain / "rec") == 2
    assert one_line(capsys.readouterr().err) == (
        f"evalkit: error: --record {plain / 'rec'}: cannot write: {plain} is not a directory"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "plain"]


def test_a_file_with_a_complete_line_is_never_discarded(tmp_path: Path) -> None:
    out = run_config(RunConfig.model_validate(config_doc()), tmp_path / "r.jsonl")
    text = out.read_text()
    assert not discard_empty_leftover(out) and out.read_text() == text
    with pytest.raises(ResultsError, match="exists: pass --resume"):
        run_config(RunConfig.model_validate(config_doc()), out)
    assert out.read_text() == text


def test_the_api_checks_before_creating_the_file(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with pytest.raises(ConfigError, match=r"families: .* match no scenario"):
        run_config(RunConfig.model_validate(config_doc(families=["nope"])), out)
    bad_url = RunConfig.model_validate(config_doc()).model_copy()
    bad_url.backends[0] = bad_url.backends[0].model_copy(update={"kind": "openai", "url": "ftp://x.test"})
    with pytest.raises(ConfigError, match=r"url 'ftp://x\.test' needs an http:// or https:// scheme"):
        run_config(bad_url, out)
    assert not out.exists()


# -- item 6: URLs, kinds and keys are checked by validate ------------------------------------------


def api_backend(**fields: Any) -> dict[str, Any]:
    return {"label": "api", "kind": "llama-server", "model": "m", **fields}


BAD_BACKENDS: dict[str, tuple[dict[str, Any], str, str]] = {
    # name -> (backend entry, the field named, what is said about it)
    "empty url": (api_backend(url=""), "backends.0.url", "url is empty"),
    "empty url, openai": (api_backend(kind="openai", url=""), "backends.0.url", "url is empty"),
    "no scheme separator": (
        api_backend(url="http//x"),
        "backends.0.url",
        "url 'http//x' needs an http:// or https:// scheme",
    ),
    "ftp without host": (api_backend(url="ftp://"), "backends.0.url", "url 'ftp://' needs an http:// or https://"),
    "no host": (api_backend(url="http://"), "backends.0.url", "url 'http://' names no host"),
    "unparseable": (api_backend(url="http://[::1"), "backends.0.url", "url 'http://[::1' is not a URL"),
    "port out of range": (
        api_backend(url="http://127.0.0.1:99999"),
        "backends.0.url",
        "url 'http://127.0.0.1:99999' is not a URL (port 99999 is not in 1-65535)",
    ),
    "one of several urls": (
        api_backend(urls=["http://127.0.0.1:8080", "http//x"]),
        "backends.0.urls.1",
        "url 'http//x' needs an http:// or https:// scheme",
    ),
    "an endpoint's url": (
        api_backend(endpoints=[{"url": "ftp://"}]),
        "backends.0.endpoints.0.url",
        "url 'ftp://' needs an http:// or https:// scheme",
    ),
    "unknown simulated profile": (
        {**SIM, "model": "no-such-profile"},
        "backends.0.model",
        "unknown simulated profile 'no-such-profile' (shipped: small-local, ",
    ),
    "unknown kind": (api_backend(kind="llamaserver"), "backends.0.kind", "unknown backend kind 'llamaserver'"),
    "unset key variable": (
        api_backend(url="http://127.0.0.1:8080", api_key_env=UNSET),
        "backends.0.api_key_env",
        f"environment variable {UNSET} is not set",
    ),
    # a serve: entry's model and template were only looked for when the server started
    "serve an unknown model": (
        api_backend(model="smollm3", serve={}),
        "backends.0.serve.model",
        "unknown model 'smollm3': use one of smollm2, gemma3-270m",
    ),
    "serve a missing gguf": (
        api_backend(serve={"model": "no-such-model.gguf"}),
        "backends.0.serve.model",
        "model file no-such-model.gguf does not exist",
    ),
    "serve a missing template": (
        api_backend(model="smollm2", serve={"template": "no-such-template.jinja"}),
        "backends.0.serve.template",
        "no-such-template.jinja does not exist",
    ),
}


@pytest.mark.parametrize("case", BAD_BACKENDS)
def test_validate_names_the_file_and_field_of_a_bad_backend(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: validate accepted all of these with exit 0; "" meant the public OpenAI endpoint
    backend, field, said = BAD_BACKENDS[case]
    cfg = write_config(tmp_path / "c.yaml", backends=[backend])
    assert main(["validate", str(cfg)]) == 1
    captured = capsys.readouterr()
    line = one_line(captured.err)
    assert line.startswith(f"{cfg}:") and f" {field}: " in line and said in line and "Value error" not in line
    assert "0 of 1 file valid" in captured.out
    out = tmp_path / "r.jsonl"
    assert run_cli(cfg, "-o", out) == 2 and not out.exists()
    assert one_line(capsys.readouterr().err) == f"evalkit: error: {line}"


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_a_hosted_api_without_its_default_key_fails_validate_and_run(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: Anthropic with no key did not fail fast as OpenAI does
    variable = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}[kind]
    monkeypatch.delenv(variable, raising=False)  # a key set on this machine must not turn the test into a skip
    cfg = write_config(tmp_path / "c.yaml", backends=[{"label": "hosted", "kind": kind, "model": "m"}])
    assert main(["validate", str(cfg)]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"{cfg}: backends.0.api_key_env: environment variable {variable} is not set")
    out = tmp_path / "r.jsonl"
    assert run_cli(cfg, "-o", out) == 2 and not out.exists()


def test_a_local_server_speaking_a_hosted_api_needs_no_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    backends = [
        {"label": "a", "kind": "anthropic", "model": "m", "url": "http://127.0.0.1:8080"},
        {"label": "o", "kind": "openai", "model": "m", "url": "http://127.0.0.1:8081/v1"},
    ]
    assert main(["validate", str(write_config(tmp_path / "c.yaml", backends=backends))]) == 0
    assert "1 of 1 file valid" in capsys.readouterr().out


# -- item 15: --resume may grow N, never shrink it -------------------------------------------------


def test_resume_with_a_larger_n_tops_up_every_cell_without_duplicates(tmp_path: Path) -> None:
    # before: -n larger than the file's N was refused as "a different config"
    out = run_config(RunConfig.model_validate(config_doc(runs=2)), tmp_path / "r.jsonl")
    before = {r.run_id: (r.outcome, r.correct) for r in load_results([out]).runs}
    run_config(RunConfig.model_validate(config_doc(runs=5)), out, resume=True)
    grown = load_results([out])
    assert set(cells_runs(out).values()) == {(0, 1, 2, 3, 4)} and len(cells_runs(out)) == CELLS
    assert grown.duplicates == 0 and not check_integrity(grown)
    assert {r.run_id: (r.outcome, r.correct) for r in grown.runs if r.run_id in before} == before
    fresh = load_results([run_config(RunConfig.model_validate(config_doc(runs=5)), tmp_path / "fresh.jsonl")])
    assert sorted((r.run_id, r.outcome, r.correct) for r in grown.runs) == sorted(
        (r.run_id, r.outcome, r.correct) for r in fresh.runs
    )  # as if run with N=5 from the start
    assert [h.runs_per_cell for h in grown.headers] == [2, 5] and grown.footers[-1].runs_written == CELLS * 3


def test_an_interrupted_file_resumed_with_a_larger_n_gets_every_run_once(tmp_path: Path) -> None:
    out = run_config(RunConfig.model_validate(config_doc(runs=2)), tmp_path / "r.jsonl")
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:6]) + lines[6][:40])  # killed after 5 runs, mid-record, no footer
    run_config(RunConfig.model_validate(config_doc(runs=3)), out, resume=True)
    resumed = load_results([out])
    assert set(cells_runs(out).values()) == {(0, 1, 2)} and resumed.duplicates == 0
    assert not check_integrity(resumed) and resumed.footers[-1].runs_written == CELLS * 3 - 5


def test_resume_with_a_smaller_n_or_another_config_is_refused(tmp_path: Path) -> None:
    out = run_config(RunConfig.model_validate(config_doc(runs=3)), tmp_path / "r.jsonl")
    text = out.read_text()
    with pytest.raises(ResultsError, match="has 3 runs per cell; resuming with 2 would drop runs: pass -n 3"):
        run_config(RunConfig.model_validate(config_doc(runs=2)), out, resume=True)
    with pytest.raises(ResultsError, match="different config"):
        run_config(RunConfig.model_validate(config_doc(runs=4, seed=4)), out, resume=True)
    assert out.read_text() == text


def test_resume_grows_n_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg, out = write_config(tmp_path / "c.yaml", runs=1), tmp_path / "r.jsonl"
    assert run_cli(cfg, "-o", out) == 0
    assert run_cli(cfg, "-o", out, "--resume", "-n", "3") == 0
    assert set(cells_runs(out).values()) == {(0, 1, 2)}
    assert run_cli(cfg, "-o", out, "--resume", "-n", "3") == 0  # nothing left to run: unchanged
    assert set(cells_runs(out).values()) == {(0, 1, 2)}
    capsys.readouterr()
    assert run_cli(cfg, "-o", out, "--resume") == 2  # the config's own runs: 1 < 3
    assert "resuming with 1 would drop runs: pass -n 3" in one_line(capsys.readouterr().err)


# -- the project's own bad-input fixtures (validate's view of them: tests/cli/test_bad_inputs.py) ------

BAD_CONFIGS = sorted((Path(__file__).resolve().parents[1] / "data" / "bad").glob("config_*.yaml"))


@pytest.mark.parametrize("path", BAD_CONFIGS, ids=lambda p: p.stem)
def test_run_refuses_every_bad_config_fixture_before_creating_a_file(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert run_cli(path, "-o", out) == 2
    assert one_line(capsys.readouterr().err).startswith(f"evalkit: error: {path}")
    assert not list(tmp_path.iterdir()) and not Path("evalkit-bad-input-side-effect").exists()


def test_a_packaged_model_whose_package_is_missing_names_the_pip_command() -> None:
    from evalkit.backends.packaged import PackagedModel
    from evalkit.errors import ModelUnavailable

    for file in ("model.gguf", None):  # a GGUF inside the package, or one assembled from chunk packages
        absent = PackagedModel(
            "tiny", "evalkit_no_such_model_package", "no-such-model-dist", "1.0", "0" * 64, file=file
        )
        with pytest.raises(ModelUnavailable, match=r"pip install no-such-model-dist==1\.0"):
            absent.check_installed()


def test_a_backend_left_out_by_backend_is_not_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run --backend sim` runs the sim entry only: an entry it leaves out (here one whose key is not
    set; in ADR-013's config a served model a dev install lacks) is checked when it runs, not now."""
    keyless = api_backend(url="http://127.0.0.1:9", api_key_env=UNSET)
    cfg = write_config(tmp_path / "c.yaml", backends=[SIM, keyless])
    out = tmp_path / "r.jsonl"
    assert run_cli(cfg, "-o", out, "--backend", "sim", "-n", "1") == 0
    assert {r.cell.backend for r in load_results([out]).runs} == {"sim"}
    assert run_cli(cfg, "-o", out, "--resume") == 2  # the left-out entry, now run, is checked
    assert f"backends.1.api_key_env: environment variable {UNSET} is not set" in capsys.readouterr().err
