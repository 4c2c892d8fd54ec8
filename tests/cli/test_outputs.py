"""No command replaces what it did not make (issue 30, item 3): every file a command writes goes
through `evalkit.results.output_file`, which refuses an existing results file unless the command writes
results itself and was asked to (`run --resume`, `rescore` in place or `--overwrite`). Every output
path is checked before any work: a refused one leaves every file as it was."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.results.output_file import check_output, holds_results

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios" / "casual_greeting"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small simulated run: its config and its results file."""
    folder = tmp_path_factory.mktemp("made")
    config = folder / "c.yaml"
    config.write_text(
        f"name: c\nseed: 1\nruns: 2\nscenarios: ['{SCENARIOS}/*.yaml']\nmodes: [native]\n"
        "backends: [{label: sim, kind: sim, model: small-local}]\nstrategies: {trust_text: [trust_text]}\n",
        encoding="utf-8",
    )
    results = folder / "r.jsonl"
    assert main(["run", str(config), "-o", str(results), "--no-progress"]) == 0
    return config, results


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


WRITERS = {
    "report -o": lambda c, r, v: ["report", str(r), "-o", str(v), "--format", "markdown"],
    "gate --junit": lambda c, r, v: ["gate", "--baseline", str(r), "--candidate", str(r), "--junit", str(v)],
    "gate --markdown": lambda c, r, v: ["gate", "--baseline", str(r), "--candidate", str(r), "--markdown", str(v)],
    "sim fit -o": lambda c, r, v: ["sim", "fit", str(r), "--model", "small-local", "-o", str(v)],
    "sim check --report": lambda c, r, v: [
        "sim",
        "check",
        "fitted/smollm2",
        str(r),
        "--report",
        str(v),
        "--draws",
        "1",
        "--runs",
        "1",
    ],
    "run --report": lambda c, r, v: ["run", str(c), "-o", str(v.with_name("new.jsonl")), "--report", str(v)],
    "serve --log": lambda c, r, v: ["serve", "llama", "--log", str(v), "--model", str(v.with_name("none.gguf"))],
    "rescore -o": lambda c, r, v: ["rescore", str(r), "-o", str(v), "--scenarios", str(SCENARIOS)],
    "merge -o": lambda c, r, v: ["merge", str(r), "-o", str(v)],
    "run -o": lambda c, r, v: ["run", str(c), "-o", str(v)],
}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_no_writer_replaces_a_results_file(
    writer: str, made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, results = made
    victim = tmp_path / "victim.md"  # a results file, under a name a report could have
    victim.write_bytes(results.read_bytes())
    before = _digests(tmp_path)
    assert main(WRITERS[writer](config, results, victim)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(victim) in err and ("holds evalkit results" in err or "exists" in err), err
    assert _digests(tmp_path) == before  # nothing written, nothing created (no new.jsonl for run --report)


def test_rescore_replaces_results_in_place_or_when_asked(
    made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = made
    own, other = tmp_path / "own.jsonl", tmp_path / "other.jsonl"
    own.write_bytes(results.read_bytes())
    other.write_bytes(results.read_bytes())
    assert main(["rescore", str(own), "-o", str(own), "--scenarios", str(SCENARIOS)]) == 0
    assert main(["rescore", str(own), "-o", str(other), "--scenarios", str(SCENARIOS)]) == 2
    assert "pass --overwrite to replace them" in capsys.readouterr().err
    assert main(["rescore", str(own), "-o", str(other), "--scenarios", str(SCENARIOS), "--overwrite"]) == 0


def test_what_counts_as_a_results_file(tmp_path: Path) -> None:
    cases = {
        "header first": b'{"type":"header","schema_version":1}\n{"type":"run"}\n',
        "keys in another order": b'{"schema_version":1, "type": "header"}\n',
        "after blank lines": b"\n  \n" + b'{"type":"header"}\n',
        "a header line cut short": b'{"type":"header","config":{"x":"' + b"y" * 100,
        "a header line past the limit": b'{"type": "header", "c": "' + b"y" * (1 << 21) + b'"}\n',
    }
    others = {
        "empty": b"",
        "a run line": b'{"type":"run"}\n',
        "other JSON lines": b'{"kind":"header"}\n',
        "text": b"# a report\n",
        "binary": bytes(range(256)),
    }
    for name, data in (cases | others).items():
        path = tmp_path / name.replace(" ", "-")
        path.write_bytes(data)
        assert holds_results(path) is (name in cases), name
    assert not holds_results(tmp_path / "missing") and not holds_results(tmp_path)


def test_an_unset_variable_and_a_file_in_the_way_are_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for path, says in [("", "an empty path"), (tmp_path / "file/out.md", "is not a directory"), (tmp_path, "Is a dir")]:
        with pytest.raises(Exception, match=says):
            check_output(path, option="--markdown")
    assert list(tmp_path.iterdir()) == [tmp_path / "file"]


def test_every_writer_goes_through_the_output_helper() -> None:
    """No module of the commands, reports or gate opens a file for writing itself (recordings and
    results have their own writers, which check their paths through the same helper)."""
    allowed = {"evalkit/results/output_file.py", "evalkit/results/writer.py", "evalkit/backends/recording.py"}
    allowed |= {"evalkit/backends/serve.py", "evalkit/report/forked.py", "evalkit/run/preflight.py"}
    # an agent's settings, written into the run's own fresh temporary HOME (no user's file can be there)
    allowed |= {"evalkit/agents/cline.py"}
    found = []
    for path in sorted((ROOT / "evalkit").rglob("*.py")):
        name = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            writes = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if writes and node.func.attr in ("write_text", "write_bytes") and name not in allowed:  # type: ignore[attr-defined]
                found.append(f"{name}:{node.lineno}")
    assert not found
