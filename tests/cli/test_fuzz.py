"""Every subcommand under hostile arguments and files (issue 30, item 2), in process through
`evalkit.cli.main`: no exception escapes it (no traceback), the exit code is one the command
documents, an input error is a last `evalkit...: error:` line, nothing printed holds a raw control
character, and no file changes but the outputs named on the command line (an existing results
file among them only by a command that writes results and was asked to).

Cheap by default (CI runs it every time); `EVALKIT_FUZZ=slow` runs many more examples. A new
subcommand joins by one line in COMMANDS, and test_every_subcommand_is_fuzzed fails until it has one.
Every example draws extra options from the subcommand's own parser, with hostile values.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import re
import shutil
import socket
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

from evalkit.cli import build_parser, main
from evalkit.cli.options import Range
from evalkit.results.output_file import holds_results
from tests.cli.fuzz_inputs import (
    NUMBERS,
    TEXT,
    WEIRD_TEXT,
    Bases,
    jsonl_file,
    make_bases,
    results_file,
    yaml_file,
)

_PROFILE = os.environ.get("EVALKIT_FUZZ", "")  # "slow", or a number of examples per subcommand
EXAMPLES = 300 if _PROFILE == "slow" else int(_PROFILE) if _PROFILE.isdigit() else 8  # per subcommand
RAN: dict[str, Counter[int]] = {}  # exit codes of the examples run, per subcommand (test_examples_ran prints them)
OUTPUT_OPTIONS = {"-o", "--out", "--output", "--report", "--junit", "--markdown", "--log", "--record"}
# never drawn: they start Ray, import code by name, or start a real server with a packaged model
NOT_DRAWN = {"--executor", "--address", "--workers", "--allow-plugin", "--allow-state-module", "--model", "-h"}
NOT_DRAWN |= {"--port", "--host"}  # a server that could listen would serve until stopped
_BUSY = socket.create_server(("127.0.0.1", 0))  # held open for the whole module: a port nothing else gets
BUSY_PORT = _BUSY.getsockname()[1]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass
class Fuzz:
    """One example: its folder, the inputs it wrote there and the outputs its command line names."""

    data: st.DataObject
    bases: Bases
    folder: Path
    outputs: set[Path] = field(default_factory=set)
    count: Iterator[int] = field(default_factory=lambda: iter(range(10_000)))

    def draw(self, strategy: st.SearchStrategy) -> object:  # type: ignore[type-arg]
        return self.data.draw(strategy)

    def _write(self, suffix: str, content: bytes) -> str:
        path = self.folder / f"in{next(self.count)}{suffix}"
        path.write_bytes(content)
        return str(path)

    def pick(self, *choices: str) -> str:
        return str(self.draw(st.sampled_from(choices)))

    def yaml_of(self, text: str) -> str:
        return self._write(".yaml", self.draw(yaml_file(text)))  # type: ignore[arg-type]

    def pick_one(self, *choices: list[str]) -> list[str]:
        return list(self.draw(st.sampled_from(choices)))  # type: ignore[arg-type]

    def maybe(self, *words: str) -> list[str]:
        return list(words) if self.draw(st.booleans()) else []

    def config(self) -> str:
        return self.yaml_of(yaml.safe_dump(self.bases.config))

    def results(self, which: str = "baseline") -> str:
        return self._write(".jsonl", self.draw(results_file(getattr(self.bases, which))))  # type: ignore[arg-type]

    def scenarios(self) -> str:
        folder = self.folder / f"scenarios{next(self.count)}"
        folder.mkdir()
        for i, text in enumerate((self.bases.scenario, self.bases.bfcl_scenario)):
            (folder / f"s{i}.yaml").write_bytes(self.draw(yaml_file(text)))  # type: ignore[arg-type]
        return str(folder)

    def profile(self) -> str:
        kind = self.draw(st.sampled_from(["file", "file", "small-local", "fitted/smollm2", "name"]))
        if kind == "file":
            return self.yaml_of(self.bases.profile)
        return str(self.draw(TEXT.filter(lambda t: t and not t.startswith("-")))) if kind == "name" else kind

    def gate_config(self) -> str:
        return self.yaml_of(self.bases.gate_config)

    def bfcl_data(self) -> str:
        folder = self.folder / f"bfcl{next(self.count)}"
        (folder / "possible_answer").mkdir(parents=True)
        name = "BFCL_v4_simple_python.json"
        (folder / name).write_bytes(self.draw(jsonl_file(self.bases.bfcl_cases)))  # type: ignore[arg-type]
        (folder / "possible_answer" / name).write_bytes(self.draw(jsonl_file(self.bases.bfcl_answers)))  # type: ignore[arg-type]
        return str(folder)

    def gguf(self) -> str:
        """A model that is never one evalkit can serve: a garbage .gguf file, or a name no package has."""
        if self.draw(st.booleans()):
            return self._write(".gguf", self.draw(st.binary(max_size=64)))  # type: ignore[arg-type]
        return str(self.draw(TEXT.filter(lambda t: t not in ("smollm2", "gemma3-270m") and not t.startswith("-"))))

    def output(self, name: str) -> str:
        """A path the command may write: new, an existing file (results, or not), a folder, under a
        file, or empty (an unset variable)."""
        kind = self.draw(st.sampled_from(["new"] * 6 + ["results", "other file", "folder", "under a file", ""]))
        path = self.folder / f"out{next(self.count)}-{name}"
        if kind == "results":
            path.write_text(self.bases.baseline, encoding="utf-8")
        elif kind == "other file":
            path.write_text("# earlier\n", encoding="utf-8")
        elif kind == "folder":
            path.mkdir()
        elif kind == "under a file":
            path.write_text("x", encoding="utf-8")
            path = path / name
        elif kind == "":
            return ""
        self.outputs.add(path)
        return str(path)

    def options(self, command: str) -> list[str]:
        """A few of the subcommand's own options, with hostile values."""
        parser = PARSERS[command]
        actions = [a for a in parser._actions if a.option_strings and not set(a.option_strings) & NOT_DRAWN]
        words: list[str] = []
        drawn = self.draw(st.sampled_from([0, 0, 0, 1, 2])) if actions else 0
        for action in self.draw(st.lists(st.sampled_from(actions), min_size=drawn, max_size=drawn)) if drawn else []:  # type: ignore[union-attr]
            words.append(action.option_strings[0])
            if action.nargs == 0:
                continue
            if set(action.option_strings) & OUTPUT_OPTIONS:
                words.append(self.output("opt"))
            elif action.choices:
                words.append(str(self.draw(st.sampled_from([*map(str, action.choices), *WEIRD_TEXT[:6]]))))
            elif isinstance(action.type, Range):
                words.append(str(self.draw(st.sampled_from([*map(str, NUMBERS), "nan", "-inf", "x", ""]))))
            else:
                words.append(str(self.draw(st.sampled_from([self.results(), self.config(), *WEIRD_TEXT[:8]]))))
        return words


@dataclass(frozen=True)
class Command:
    exits: frozenset[int]  # the exit codes the command documents
    argv: Callable[[Fuzz], list[str]]


def _cmd(exits: set[int], argv: Callable[[Fuzz], list[str]]) -> Command:
    return Command(frozenset(exits), argv)


# One line per subcommand (as the parser names it: "sim fit"), with the exit codes it documents.
COMMANDS: dict[str, Command] = {
    "run": _cmd({0, 2, 3}, lambda f: ["run", f.config(), "-o", f.output("r.jsonl"), *f.maybe("--resume")]),
    "merge": _cmd({0, 2}, lambda f: ["merge", f.results(), *f.maybe(f.results("candidate")), "-o", f.output("m")]),
    "report": _cmd({0, 2}, lambda f: ["report", f.results(), "-o", f.output("r"), "--format", f.pick(*FORMATS)]),
    "gate": _cmd({0, 1, 2, 4}, lambda f: ["gate", "--baseline", f.results(), "--candidate", f.results("candidate")]),
    "plan": _cmd({0, 2}, lambda f: ["plan", f.results(), *f.maybe("--profile", f.profile(), *SMALL_PLAN)]),
    "validate": _cmd({0, 1, 2}, lambda f: ["validate", f.config(), f.scenarios()]),
    "rescore": _cmd({0, 2}, lambda f: ["rescore", f.results(), "-o", f.output("x"), *f.maybe("--overwrite")]),
    "list": _cmd({0, 2}, lambda f: ["list", f.pick("all", "scenarios", "profiles"), "--scenarios-dir", f.scenarios()]),
    "serve llama": _cmd(
        {2, 3}, lambda f: ["serve", "llama", "--model", f.gguf(), "--log", f.output("log"), "--timeout", "5"]
    ),
    # its port is held by the test, so a valid command line ends at "cannot listen" (exit 3), never serves
    "serve sim": _cmd(
        {2, 3},
        lambda f: [
            "serve",
            "sim",
            "--model",
            f.profile(),
            *f.pick_one(["--config", f.config()], ["--scenarios", f.scenarios()]),
            "--host",
            "127.0.0.1",
            "--port",
            str(BUSY_PORT),
        ],
    ),
    "import": _cmd({0, 2}, lambda f: ["import", "bfcl", "--categories", f.pick(*CATEGORIES), "--data", f.bfcl_data()]),
    "sim fit": _cmd({0, 2}, lambda f: ["sim", "fit", f.results("real"), "--model", f.pick("small-local", "m", "")]),
    "sim check": _cmd(
        {0, 2}, lambda f: ["sim", "check", f.profile(), f.results("real"), "--draws", "2", "--runs", "2"]
    ),
}
# what the commands above also take, drawn for every example of theirs (outputs, scenarios, settings)
EXTRA: dict[str, Callable[[Fuzz], list[str]]] = {
    "run": lambda f: ["--no-progress"],
    "report": lambda f: f.maybe("--published", f.yaml_of(f.bases.published)),
    "gate": lambda f: ["--junit", f.output("xml"), "--markdown", f.output("md"), *f.maybe("--config", f.gate_config())],
    "plan": lambda f: ["--scenarios", f.scenarios()],
    "rescore": lambda f: ["--scenarios", f.scenarios()],
    "import": lambda f: ["-o", f.output("imported")],
    "sim fit": lambda f: ["-o", f.output("p.yaml"), "--scenarios", f.scenarios()],
    "sim check": lambda f: ["--scenarios", f.scenarios(), *f.maybe("--report", f.output("c.html"))],
}
FORMATS = ("markdown", "markdown", "json", "html")
SMALL_PLAN = ("--experiments", "2", "--sim-runs", "2")
CATEGORIES = ("simple_python", "python", "nope", "")


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[str, argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {" ".join(path): parser}
    return {k: v for name, sub in subs[0].choices.items() for k, v in _leaves(sub, (*path, name)).items()}


PARSERS = _leaves(build_parser(full=True))


def test_every_subcommand_is_fuzzed() -> None:
    assert sorted(PARSERS) == sorted(COMMANDS)


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> Bases:
    return make_bases(tmp_path_factory.mktemp("bases"))


def _snapshot(folder: Path) -> dict[Path, str]:
    return {
        p: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in folder.rglob("*")
        if not p.is_symlink()
    }


def _named(path: Path, outputs: set[Path]) -> bool:
    return any(path == o or o in path.parents for o in outputs)


def _may_replace_results(argv: list[str], path: Path) -> bool:
    """A results file changes only by `run --resume` or `rescore` (in place, or --overwrite)."""
    if argv[0] == "run":
        return "--resume" in argv
    return argv[0] == "rescore" and ("--overwrite" in argv or Path(argv[1]).resolve() == path.resolve())


def _check(
    command: str, argv: list[str], f: Fuzz, before: dict[Path, str], held: set[Path], code: object, out: str, err: str
) -> None:
    where = f"{argv!r}\nexit {code}\nstdout: {out[-800:]}\nstderr: {err[-1500:]}"
    assert isinstance(code, int) and code in COMMANDS[command].exits, where
    assert "Traceback" not in out + err, where
    assert not CONTROL.search(out), where
    if code == 2:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert re.match(r"evalkit[\w ]*: error: ", last), where
    after = _snapshot(f.folder)
    for path, digest in after.items():
        if before.get(path) != digest and not _named(path, f.outputs):
            raise AssertionError(f"{path} changed, and the command line names it as no output\n{where}")
    for path, digest in before.items():
        changed = after.get(path) != digest
        if changed and path in held:
            assert _may_replace_results(argv, path), f"{path}: a results file was replaced\n{where}"
        if changed and not _named(path, f.outputs):
            raise AssertionError(f"{path} changed or vanished, and is no output\n{where}")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_fuzz(command: str, bases: Bases, tmp_path: Path) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=not _PROFILE,  # by default the same examples on every CI run; asked for more, new ones
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure keeps its example's folder
        verbosity=Verbosity.quiet,  # the drawn files are long; the failure names the folder that holds them
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )
    @given(st.data())
    def example(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp, contextlib.chdir(tmp):
            f = Fuzz(data, bases, Path(tmp))
            argv = COMMANDS[command].argv(f) + EXTRA.get(command, lambda f: [])(f) + f.options(command)
            before = _snapshot(f.folder)
            held = {p for p, digest in before.items() if digest != "dir" and holds_results(p)}
            out, err = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(argv)
                RAN.setdefault(command, Counter())[code] += 1
                _check(command, argv, f, before, held, code, out.getvalue(), err.getvalue())
            except BaseException as exc:  # an exception out of main is a traceback a user would see
                kept = tmp_path / f.folder.name
                shutil.copytree(f.folder, kept, symlinks=True)
                trace = "".join(traceback.format_exception(exc)) if not isinstance(exc, AssertionError) else str(exc)
                raise AssertionError(f"{argv!r}\n{trace}\n(the example's files: {kept})") from None

    example()


def test_examples_ran() -> None:
    """How many examples the fuzz ran (printed with `pytest -s`); each subcommand ran some."""
    total = sum(sum(codes.values()) for codes in RAN.values())
    print(
        f"\nfuzz: {total} examples; exit codes per subcommand: " + "; ".join(f"{c} {dict(n)}" for c, n in RAN.items())
    )
    assert not RAN or set(RAN) == set(COMMANDS)


def test_the_yaml_fixtures_are_yaml(bases: Bases) -> None:
    assert yaml.safe_load(bases.gate_config)["alpha"] == 0.05
