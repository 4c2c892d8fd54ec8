"""Results files are data: a hand-edited or hostile record is a one-line error naming the file, the
line and the field, with exit 2, in every command that reads one (issue 30, item 1). Exit 1 is the
gate's "regressed" and must never come from a file it could not read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.chat import MAX_ARGUMENT_NESTING, ToolCall, parse_arguments
from evalkit.cli import main
from evalkit.results.reader import MAX_NESTING, load_results
from evalkit.results.scan import scan_results
from tests.report import records

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    return records.write_results(tmp_path / "plain.jsonl", records.cell_runs(3, 5), runs_per_cell=5)


def _edited(plain: Path, lineno: int, edit: str, old: str, new: str) -> Path:
    lines = plain.read_text(encoding="utf-8").splitlines()
    assert old in lines[lineno - 1]
    lines[lineno - 1] = lines[lineno - 1].replace(old, new, 1)
    out = plain.with_name(edit + ".jsonl")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _commands(path: Path, plain: Path, tmp_path: Path) -> dict[str, list[str]]:
    return {
        "report": ["report", str(path), "-o", str(tmp_path / "r.md"), "--format", "markdown"],
        "gate": ["gate", "--baseline", str(plain), "--candidate", str(path)],
        "merge": ["merge", str(path), "-o", str(tmp_path / "m.jsonl")],
        "plan": ["plan", str(path)],
    }


@pytest.mark.parametrize("command", ["report", "gate", "merge", "plan"])
@pytest.mark.parametrize("where", ["error", "messages"])  # a field of the run's head, and one of its transcript
def test_a_value_nested_100000_deep_is_exit_2_naming_the_line(
    command: str, where: str, plain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: RecursionError tracebacks, exit 1 (the gate's "regressed") in all four
    old, new = ('"error":null', f'"error":{DEEP}') if where == "error" else ('"messages":[', f'"messages":[{DEEP},')
    deep = _edited(plain, 2, "deep", old, new)
    assert main(_commands(deep, plain, tmp_path)[command]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evalkit: error: {deep}:2: not JSON: recursion limit exceeded") and err.count("\n") == 1
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "m.jsonl").exists()


def test_a_resume_of_a_deeply_nested_file_is_exit_2(
    plain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evalkit.results.writer import finished_runs

    deep = _edited(plain, 2, "deep", '"error":null', f'"error":{DEEP}')
    with pytest.raises(Exception, match=r"deep.jsonl:2: not JSON: recursion limit exceeded"):
        finished_runs(deep)
    bad_id = _edited(plain, 2, "noid", '"run_id":"sim/native/trust_text/s1/0"', '"run_id":null')
    with pytest.raises(Exception, match=r"noid.jsonl:2: run_id: Input should be a valid string"):
        finished_runs(bad_id)  # before: a KeyError or a TypeError deep in the resume
    capsys.readouterr()


def test_a_header_with_modes_null_is_exit_2_naming_the_field(
    plain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: TypeError: 'NoneType' object is not iterable, in `report`
    header = json.loads(plain.read_text(encoding="utf-8").splitlines()[0])
    header["config"] = {"name": "x", "modes": None}
    lines = plain.read_text(encoding="utf-8").splitlines()
    edited = tmp_path / "modes.jsonl"
    edited.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    for argv in _commands(edited, plain, tmp_path).values():
        assert main(argv) == 2
        assert capsys.readouterr().err == f"evalkit: error: {edited}:1: config.modes: Input should be a valid list\n"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"backends": [{"kind": "sim"}]}, "config.backends.0.label: Field required"),
        ({"backends": "sim"}, "config.backends: Input should be a valid list"),
        ({"strategies": {"a": None}}, "config.strategies.a: Input should be a valid list"),
        ({"sampling": 3}, "config.sampling: Input should be a valid dictionary"),
    ],
)
def test_header_config_fields_the_readers_use_are_typed(
    config: dict[str, object], field: str, plain: Path, tmp_path: Path
) -> None:
    header = json.loads(plain.read_text(encoding="utf-8").splitlines()[0]) | {"config": config}
    edited = tmp_path / "h.jsonl"
    edited.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=f"h.jsonl:1: {field}"):
        load_results([edited])


def test_a_record_of_another_type_is_named_shortly(tmp_path: Path) -> None:
    edited = tmp_path / "t.jsonl"
    edited.write_text(json.dumps({"type": "x" * 10_000}) + "\n" + json.dumps({"type": [1]}) + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"t.jsonl:1: not an evalkit record \(type 'xxxx") as caught:
        scan_results([edited])
    assert len(str(caught.value)) < len(str(edited)) + 100


def test_what_the_runner_writes_nests_within_what_the_reader_reads(tmp_path: Path) -> None:
    """A model's call nested past the limit is a malformed call (its text kept), so every record the
    runner writes reads back: pydantic fails to write a value nested about 255 deep at all."""
    at_limit = '{"a": ' + "[" * (MAX_ARGUMENT_NESTING - 1) + "]" * (MAX_ARGUMENT_NESTING - 1) + "}"
    args, error = parse_arguments(at_limit)
    assert error is None and args is not None
    assert parse_arguments(at_limit.replace('{"a": ', '{"a": [').replace("}", "]}"))[1] == (
        f"arguments nested deeper than {MAX_ARGUMENT_NESTING} levels"
    )
    assert parse_arguments({"a": json.loads("[" * 300 + "]" * 300)})[0] is None
    deep = records.run(
        messages=[
            records.Message(role="user", content="hi"),
            records.Message(role="assistant", tool_calls=[ToolCall(name="t", arguments=args)], origin="model"),
        ]
    )
    path = records.write_results(tmp_path / "d.jsonl", [deep])
    assert load_results([path]).runs[0].messages[1].tool_calls[0].arguments == args
    assert MAX_ARGUMENT_NESTING + 10 < MAX_NESTING
