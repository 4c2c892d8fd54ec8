"""Every numeric option is range-checked while the command line is parsed (issue 30, item 1): one line
naming the option, exit 2, and nothing read, computed or written. The ranges live in
`evalkit.cli.options`; the gate's also bound its settings file, and the two are held equal here."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
from annotated_types import Ge, Gt, Le, Lt

from evalkit.cli import build_parser, main
from evalkit.cli.options import Range
from evalkit.gate.config import GateConfig, SequentialSettings

ROOT = Path(__file__).resolve().parents[2]


def _parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    found = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= _parsers(sub, (*path, name))
    return found


def _numeric_options() -> list[tuple[tuple[str, ...], argparse.Action]]:
    return [
        (path, action)
        for path, parser in _parsers(build_parser(full=True)).items()
        for action in parser._actions
        if action.type in (int, float) or isinstance(action.type, Range)
    ]


def test_every_numeric_option_has_a_range() -> None:
    untyped = [(p, a.option_strings) for p, a in _numeric_options() if not isinstance(a.type, Range)]
    assert not untyped
    assert len(_numeric_options()) >= 25


# (command line, what the one line must say); before: tracebacks with exit 1, or silently accepted
OBSERVED = [
    (["plan", "B.jsonl", "--alpha", "0"], "argument --alpha: '0' is not a number in (0, 1)"),  # OverflowError
    (
        ["sim", "check", "P.yaml", "R.jsonl", "--draws", "0"],
        "argument --draws: '0' is not a whole number in [1, 100000]",
    ),
    (["sim", "check", "P.yaml", "R.jsonl", "--draws", "2147483648"], "argument --draws: '2147483648' is not"),
    (["plan", "x" * 300 + ".jsonl"], "argument baseline: 'xxxxxxxxxx"),  # ENAMETOOLONG traceback
    (["report", "", "-o", "r.html"], "argument results: an empty path"),
    (["plan", "B.jsonl", "--alpha", "nan"], "argument --alpha: 'nan' is not a number in (0, 1)"),
    (["plan", "B.jsonl", "--drop", "1"], "argument --drop: '1' is not a number in (0, 1)"),
    (["plan", "B.jsonl", "--margin", "-0.1"], "argument --margin: '-0.1' is not a number in [0, 1)"),
    (["plan", "B.jsonl", "--sim-runs", "0"], "argument --sim-runs: '0' is not a whole number in [1, 100000]"),
    (["plan", "B.jsonl", "--experiments", "1e3"], "argument --experiments: '1e3' is not a whole number"),
    (["sim", "check", "P.yaml", "R.jsonl", "--runs", "-2"], "argument --runs: '-2' is not a whole number"),
    (["report", "R.jsonl", "--alpha", "1"], "argument --alpha: '1' is not a number in (0, 1)"),
    (["report", "R.jsonl", "--transcripts", "-1"], "argument --transcripts: '-1' is not a whole number in [0, 1000]"),
    (["report", "R.jsonl", "--seed", "-5"], "argument --seed: '-5' is not a whole number in [0, 9223372036854775808)"),
    (["import", "bfcl", "--categories", "all", "-o", "x", "--sample", "0"], "argument --sample: '0'"),
    (["run", "C.yaml", "--workers", "0"], "argument --workers: '0' is not a whole number in [1, 1024]"),
    (["serve", "llama", "--port", "70000"], "argument --port: '70000' is not a whole number in [0, 65535]"),
    (["serve", "llama", "--timeout", "inf"], "argument --timeout: 'inf' is not a number in (0, 86400]"),
    (["serve", "llama", "--parallel", "0"], "argument --parallel: '0' is not a whole number in [1, 1024]"),
    (
        ["gate", "--baseline", "B", "--candidate", "C", "--floor", "-1"],
        "argument --floor: '-1' is not a number in [0, 1]",
    ),
]


@pytest.mark.parametrize(("argv", "says"), OBSERVED, ids=[" ".join(a) for a, _ in OBSERVED])
def test_an_option_out_of_range_is_one_line_exit_2_before_anything_is_read(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # none of the files named exists: the option is refused before they are looked at
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(
        f"evalkit {' '.join(argv[:2] if argv[0] in ('sim', 'serve') else argv[:1])}: error: {says}"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "model", "field"),
    [
        ("--alpha", GateConfig, "alpha"),
        ("--floor", GateConfig, "floor"),
        ("--max-infra-error-rate", GateConfig, "max_infra_error_rate"),
        ("--margin", GateConfig, "margin"),
        ("--futility", SequentialSettings, "futility"),
        ("--batch", SequentialSettings, "batch"),
        ("--max-runs", SequentialSettings, "max_runs"),
    ],
)
def test_the_gates_options_have_the_ranges_of_its_settings_file(option: str, model: type, field: str) -> None:
    gate = _parsers(build_parser(full=True))[("gate",)]
    action = next(a for a in gate._actions if option in a.option_strings)
    assert isinstance(action.type, Range)
    metadata = model.model_fields[field].metadata
    bounds = {k: getattr(m, k) for m in metadata for k in ("gt", "ge", "lt", "le") if hasattr(m, k)}
    assert {k: getattr(action.type, k) for k in ("gt", "ge", "lt", "le") if getattr(action.type, k) is not None} == (
        bounds
    )
    assert all(isinstance(m, Gt | Ge | Lt | Le) for m in model.model_fields[field].metadata)


def test_a_range_refuses_what_python_would_parse() -> None:
    alpha = Range(float, gt=0, lt=1)
    assert alpha("0.05") == 0.05
    for text in ("0", "1", "nan", "inf", "-inf", "1e999", "x", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            alpha(text)
    count = Range(int, ge=1)
    assert count("3") == 3 and not math.isnan(count("1"))
    for text in ("0", "1.5", "1e3", "9" * 5000):
        with pytest.raises(argparse.ArgumentTypeError):
            count(text)
